package io.graveler.oracle;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * Delta's log store for local files, with a gate for the delta-spark oracle of
 * tests/tables/delta: once armed, the next commit file written (by whichever thread) is held
 * until release(), after its actions are copied to the capture file. Another thread's commit
 * meanwhile takes the version first, so the held one meets Delta's own conflict check.
 */
public class GateLogStore extends io.delta.storage.HDFSLogStore {
  private static final Object LOCK = new Object();
  private static String capture = null;
  private static boolean holding = false;
  private static boolean released = false;

  public GateLogStore(Configuration conf) {
    super(conf);
  }

  public static void arm(String capturePath) {
    synchronized (LOCK) {
      capture = capturePath;
      holding = false;
      released = false;
    }
  }

  public static boolean isHolding() {
    synchronized (LOCK) {
      return holding;
    }
  }

  public static void release() {
    synchronized (LOCK) {
      released = true;
      capture = null;
      LOCK.notifyAll();
    }
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
      throws IOException {
    if (!path.getName().endsWith(".json") || overwrite) {
      super.write(path, actions, overwrite, conf);
      return;
    }
    List<String> lines = new ArrayList<>();
    actions.forEachRemaining(lines::add);
    synchronized (LOCK) {
      if (capture != null && !holding && !released) {
        Files.write(Paths.get(capture), lines, StandardCharsets.UTF_8);
        holding = true;
        while (!released) {
          try {
            LOCK.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
          }
        }
        holding = false;
      }
    }
    super.write(path, lines.iterator(), overwrite, conf);
  }
}
