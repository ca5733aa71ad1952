package io.graveler.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.ui.SQLAppStatusStore;
import org.apache.spark.sql.execution.ui.SQLExecutionUIData;
import org.apache.spark.sql.execution.ui.SQLPlanMetric;

/**
 * Spark's own count of the files one of its file writes produced: the "number of written
 * files" metric of the SQL execution run under a known job description, read from the SQL
 * status store once Spark's listener has recorded the execution's end.
 *
 * <p>Used to check that the driver sees every file Spark's tasks wrote (a {@code file://}
 * namespace must be shared by the driver and every executor). When the figure cannot be read
 * (a Spark whose status store changed, an execution not recorded in time) the count is
 * unknown, {@code -1}, and the check is the weaker one: at least one file.
 */
final class SparkFileCount {
  static final String DESCRIPTION = "spark.job.description";
  private static final String METRIC = "number of written files";
  private static final long SETTLE_MILLIS = 10_000;
  private static final int RECENT = 16; // executions searched, newest first

  private SparkFileCount() {}

  /** Runs {@code body} with the job description {@code description}, then restores it. */
  static void described(SparkSession spark, String description, Runnable body) {
    SparkContext sc = spark.sparkContext();
    String previous = sc.getLocalProperty(DESCRIPTION);
    sc.setLocalProperty(DESCRIPTION, description);
    try {
      body.run();
    } finally {
      sc.setLocalProperty(DESCRIPTION, previous);
    }
  }

  /** The count of files written by the finished execution described {@code description},
   * or -1 when unknown. */
  static long of(SparkSession spark, String description) {
    long deadline = System.currentTimeMillis() + SETTLE_MILLIS;
    try {
      SQLAppStatusStore store = spark.sharedState().statusStore();
      while (true) {
        long[] found = lookup(store, description);
        if (found[0] == 1 || System.currentTimeMillis() > deadline) {
          return found[1];
        }
        Thread.sleep(20);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    } catch (RuntimeException | LinkageError e) { // a changed status store: unknown
      return -1;
    }
  }

  /** {1 if the execution is recorded as finished else 0, its count or -1}. */
  private static long[] lookup(SQLAppStatusStore store, String description) {
    int total = (int) store.executionsCount();
    int start = Math.max(0, total - RECENT);
    scala.collection.immutable.Seq<SQLExecutionUIData> recent =
        store.executionsList(start, total - start);
    for (int i = recent.size() - 1; i >= 0; i--) {
      SQLExecutionUIData execution = recent.apply(i);
      if (!description.equals(execution.description())) {
        continue;
      }
      if (execution.completionTime().isEmpty()) {
        return new long[] {0, -1};
      }
      return new long[] {1, count(store, execution)};
    }
    return new long[] {0, -1};
  }

  /** The metric's value; an adaptive plan lists a metric once per plan version, only some
   * with a value, so the largest value counts (0 when the metric never got one). */
  private static long count(SQLAppStatusStore store, SQLExecutionUIData execution) {
    scala.collection.immutable.Map<Object, String> values =
        store.executionMetrics(execution.executionId());
    scala.collection.Seq<SQLPlanMetric> metrics = execution.metrics();
    long found = -1;
    for (int i = 0; i < metrics.size(); i++) {
      SQLPlanMetric metric = metrics.apply(i);
      if (METRIC.equals(metric.name())) {
        scala.Option<String> value = values.get(metric.accumulatorId());
        long n = value.isDefined() ? Long.parseLong(value.get().replace(",", "").trim()) : 0;
        found = Math.max(found, n);
      }
    }
    return found;
  }
}
