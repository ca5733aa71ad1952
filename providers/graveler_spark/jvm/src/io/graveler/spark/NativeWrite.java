package io.graveler.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.DataFrameWriter;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.sources.InsertableRelation;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A batch write of Parquet by Spark's own writer, staged by graveler on the driver (see
 * {@code graveler_spark.shim_writes} for the Python half).
 *
 * <p>Spark hands the rows to {@link #insert} (a {@link V1Write}: the table declares {@code
 * V1_BATCH_WRITE} when {@link #wanted}). It asks the Python source to check the target and
 * open a job ({@code begin}: the errors of the Python writer, raised before any task runs),
 * runs {@code df.write.format("parquet")} into the job's scratch directory of the namespace,
 * reads Spark's own count of the files written, and asks the Python source to verify, stage
 * and commit them ({@code finish}). If Spark's write fails, the scratch directory is deleted
 * and nothing is staged; if staging fails, the Python side deletes it. A namespace Spark
 * cannot write here (S3) makes {@code begin} answer "not native": the rows then go through
 * the Python writer ({@code nativeWrites=false}). Streaming writes always do.
 */
final class NativeWrite implements V1Write {
  static final String NATIVE_OPTION = "nativeWrites";
  private static final String FIELD = "__graveler_write";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final WriteBuilder python; // the Python writer's builder: streaming and fallbacks
  private final Map<String, String> options; // the write's options (partitionBy included)
  private final boolean overwrite;

  private NativeWrite(WriteBuilder python, Map<String, String> options, boolean overwrite) {
    this.python = python;
    this.options = options;
    this.overwrite = overwrite;
  }

  /**
   * Whether a write with {@code options} goes native: Parquet (the default format), not
   * turned off with {@code nativeWrites=false}. Raises IllegalArgumentException when
   * {@code nativeWrites} is not a boolean.
   */
  static boolean wanted(CaseInsensitiveStringMap options) {
    return GravelerTableProvider.nativeParquet(options, NATIVE_OPTION);
  }


  /** The builder Spark configures (append, or truncate for an overwrite). */
  static WriteBuilder builder(WriteBuilder python, Map<String, String> options) {
    return new Builder(python, options);
  }

  @Override
  public String description() {
    return "graveler native Parquet write";
  }

  @Override
  public StreamingWrite toStreaming() {
    return python.build().toStreaming();
  }

  @Override
  public InsertableRelation toInsertableRelation() {
    return (data, ignored) -> insert(data); // Spark passes false: truncation came by truncate()
  }

  private void insert(Dataset<Row> data) {
    StructType schema = data.schema();
    JsonNode begun = ask("begin", schema, Map.of());
    if (!begun.path("native").asBoolean(false)) {
      pythonWrite(data);
      return;
    }
    String directory = begun.path("directory").asText();
    String description = "graveler native write " + directory;
    SparkSession spark = data.sparkSession();
    try {
      SparkFileCount.described(spark, description, () -> sparkWrite(data, begun, directory));
    } catch (Throwable e) { // Scala code throws checked exceptions (SparkException) too
      deleteQuietly(spark, directory);
      throw e;
    }
    long files = SparkFileCount.of(spark, description);
    String job = begun.path("job").asText();
    ask("finish", schema, Map.of("__write_job", job, "__write_files", String.valueOf(files)));
  }

  /** Spark's own Parquet writer into the job's scratch directory (which must not exist). */
  private static void sparkWrite(Dataset<Row> data, JsonNode begun, String directory) {
    DataFrameWriter<Row> writer = data.write().format("parquet").mode(SaveMode.ErrorIfExists);
    begun.path("options").fields().forEachRemaining(e -> writer.option(e.getKey(), e.getValue().asText()));
    List<String> columns = new ArrayList<>();
    begun.path("partitionBy").forEach(c -> columns.add(c.asText()));
    if (!columns.isEmpty()) {
      writer.partitionBy(columns.toArray(new String[0]));
    }
    writer.save(directory);
  }

  /** The same write through the Python writer (a namespace Spark cannot write here). */
  private void pythonWrite(Dataset<Row> data) {
    Map<String, String> opts = new HashMap<>();
    options.forEach((k, v) -> {
      if (!k.startsWith("__")) {
        opts.put(k, v);
      }
    });
    opts.put(NATIVE_OPTION, "false");
    SaveMode mode = overwrite ? SaveMode.Overwrite : SaveMode.Append;
    data.write().format(GravelerTableProvider.NAME).options(opts).mode(mode).save();
  }

  /** One request to the Python source on the driver; its JSON answer. */
  private JsonNode ask(String request, StructType schema, Map<String, String> extra) {
    Map<String, String> opts = new HashMap<>(options);
    opts.put("__write", request);
    opts.put("__write_schema", schema.json());
    opts.put("__write_overwrite", String.valueOf(overwrite));
    opts.putAll(extra);
    PythonDataSourceV2 source = new PythonDataSourceV2(); // one per call: it caches its answer
    source.setShortName(GravelerTableProvider.NAME);
    StructType answer = source.inferSchema(new CaseInsensitiveStringMap(opts));
    try {
      return JSON.readTree(answer.fields()[0].metadata().getString(FIELD));
    } catch (IOException e) {
      throw new IllegalStateException("graveler: unreadable answer to " + request, e);
    }
  }

  private static void deleteQuietly(SparkSession spark, String directory) {
    try {
      Path path = new Path(directory);
      FileSystem fs = path.getFileSystem(spark.sparkContext().hadoopConfiguration());
      fs.delete(path, true);
    } catch (IOException | RuntimeException e) {
      // best effort: the write's own error is the one to report
    }
  }

  /** Append by default; {@link #truncate} makes it an overwrite of the table. */
  private static final class Builder implements SupportsTruncate {
    private WriteBuilder python;
    private final Map<String, String> options;
    private boolean overwrite;

    Builder(WriteBuilder python, Map<String, String> options) {
      this.python = python;
      this.options = options;
    }

    @Override
    public WriteBuilder truncate() {
      if (python instanceof SupportsTruncate t) {
        python = t.truncate();
      }
      overwrite = true;
      return this;
    }

    @Override
    public V1Write build() {
      return new NativeWrite(python, options, overwrite);
    }
  }
}
