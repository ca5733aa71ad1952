package io.graveler.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.NoopCache$;
import org.apache.spark.sql.execution.datasources.PartitionPath;
import org.apache.spark.sql.execution.datasources.PartitionSpec;
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex;
import org.apache.spark.sql.types.StructType;

import scala.Option;
import scala.collection.immutable.Seq;
import scala.collection.mutable.LinkedHashMap;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The files of one planned graveler read, as Spark's file sources see a table: a fixed list of
 * physical files grouped by partition values, handed over by the Python side (no listing, no
 * stat of any file here or later). Spark's own {@code listFiles} prunes the partitions with
 * the query's partition filters.
 *
 * <p>The physical files of one partition do not share a directory (graveler keeps them flat
 * under each job's prefix), so every partition gets a synthetic key {@code
 * graveler-partition:/N}, used only to look its files up. {@link #allFiles()} is every file,
 * partitioned or not.
 */
final class PlannedFileIndex extends PartitioningAwareFileIndex {
  private final Seq<Path> roots;
  private final PartitionSpec spec;
  private final LinkedHashMap<Path, FileStatus> leaves = new LinkedHashMap<>();
  private final scala.collection.immutable.Map<Path, FileStatus[]> byPartition;

  /** One partition of the plan: its values (Spark's internal row) and files. */
  record Group(InternalRow values, List<FileStatus> files) {}

  PlannedFileIndex(SparkSession spark, Path root, StructType partitionSchema, List<Group> groups) {
    super(spark, emptyMap(), Option.empty(), NoopCache$.MODULE$);
    this.roots = seq(List.of(root));
    Map<Path, FileStatus[]> children = new HashMap<>();
    List<PartitionPath> paths = new ArrayList<>();
    for (int i = 0; i < groups.size(); i++) {
      Group g = groups.get(i);
      Path key = new Path("graveler-partition", null, "/" + i);
      children.put(key, g.files().toArray(new FileStatus[0]));
      paths.add(PartitionPath.apply(g.values(), key));
      for (FileStatus f : g.files()) {
        leaves.update(f.getPath(), f);
      }
    }
    this.spec = new PartitionSpec(partitionSchema, seq(paths));
    this.byPartition = scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(children));
  }

  /** A file Spark reads as it is: length known, no block locations (so no locality). */
  static FileStatus file(String uri, long size) {
    return new FileStatus(size, false, 1, 128L * 1024 * 1024, 0L, new Path(uri));
  }

  @Override
  public PartitionSpec partitionSpec() {
    return spec;
  }

  @Override
  public LinkedHashMap<Path, FileStatus> leafFiles() {
    return leaves;
  }

  @Override
  public scala.collection.immutable.Map<Path, FileStatus[]> leafDirToChildrenFiles() {
    return byPartition;
  }

  @Override
  public Seq<FileStatus> allFiles() {
    return leaves.values().toSeq();
  }

  @Override
  public Seq<Path> rootPaths() {
    return roots;
  }

  @Override
  public void refresh() {
    // the plan is pinned: there is nothing to refresh
  }

  private static <T> Seq<T> seq(List<T> items) {
    return CollectionConverters.asScala(items).toSeq();
  }

  private static scala.collection.immutable.Map<String, String> emptyMap() {
    return scala.collection.immutable.Map$.MODULE$.<String, String>empty();
  }
}
