package io.graveler.spark;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code graveler} format on the JVM: a thin wrapper over the Python data source of the
 * same name (registered by the {@code pyspark_graveler} module or {@code graveler_spark.register}).
 *
 * <p>It exists because Spark checks {@code .partitionBy(...)} against the partitioning a table
 * declares, and a Python data source cannot declare any. This provider accepts the partitioning
 * the writer asks for, declares it on the table, and hands it to the Python writer as the
 * {@code partitionBy} option. It also passes the session settings the Python side cannot read
 * (partition overwrite mode, filter pushdown, the default parallelism) as options.
 *
 * <p>Reads of Parquet (the default format) from a namespace this JVM can open are planned by
 * the Python source on the driver and read by Spark's own Parquet scan ({@link NativePlan}):
 * Spark's partition pruning, filter pushdown, column pruning and vectorized reader. CSV, JSON,
 * S3 without S3A on the class path and the option {@code nativeReads=false} keep the Python
 * reader; so does a read given a schema ({@code .schema(...)}, which the Python reader converts
 * to as asked where Spark's would refuse).
 *
 * <p>Batch writes of Parquet are written by Spark's own Parquet writer and staged by the Python
 * source on the driver ({@link NativeWrite}); CSV, JSON, streaming writes, S3 namespaces and
 * the option {@code nativeWrites=false} keep the Python writer.
 */
public final class GravelerTableProvider implements TableProvider, DataSourceRegister {
  public static final String NAME = "graveler";
  static final String PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled";
  static final String OVERWRITE_CONF = "spark.sql.sources.partitionOverwriteMode";
  static final String TIMESTAMPS_CONF = "spark.sql.parquet.outputTimestampType";

  private final PythonDataSourceV2 python = new PythonDataSourceV2();

  public GravelerTableProvider() {
    python.setShortName(NAME);
  }

  @Override
  public String shortName() {
    return NAME;
  }

  /** The Python source's schema; for a Parquet read, with the native read plan in its first
   * field (taken off again by {@link #getTable}). */
  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    CaseInsensitiveStringMap opts = withSession(options);
    return python.inferSchema(NativePlan.wanted(opts) ? NativePlan.request(opts) : opts);
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    Map<String, String> props = withSession(new CaseInsensitiveStringMap(properties));
    NativePlan plan = NativePlan.carriedBy(schema); // null: a user schema, or a write
    StructType visible = plan == null ? schema : plan.schema;
    Table table = python.getTable(visible, new Transform[0], props);
    boolean nativeWrites = NativeWrite.wanted(new CaseInsensitiveStringMap(props));
    return new GravelerTable(table, partitioning, visible, plan, nativeWrites);
  }

  /**
   * Whether Spark's own Parquet path serves a read or write with {@code options}: Parquet (the
   * default format) and {@code switchOption} (nativeReads / nativeWrites) not false. Raises
   * IllegalArgumentException when the switch is not a boolean, as the Python options do.
   */
  static boolean nativeParquet(CaseInsensitiveStringMap options, String switchOption) {
    String format = options.getOrDefault("format", "parquet").trim().toLowerCase(Locale.ROOT);
    String raw = options.getOrDefault(switchOption, "true");
    String value = raw.trim().toLowerCase(Locale.ROOT);
    if (!Arrays.asList("true", "1", "yes", "false", "0", "no").contains(value)) {
      throw new IllegalArgumentException(
          "option '" + switchOption + "' must be true or false, got '" + raw + "'");
    }
    return "parquet".equals(format) && !Arrays.asList("false", "0", "no").contains(value);
  }

  /** {@code options} plus the session settings the Python data source cannot see. */
  static CaseInsensitiveStringMap withSession(CaseInsensitiveStringMap options) {
    SQLConf conf = SQLConf.get();
    Map<String, String> out = new HashMap<>(options.asCaseSensitiveMap());
    out.put("__pushdown", conf.getConfString(PUSHDOWN_CONF, "false"));
    out.put("__parquet_timestamps", conf.getConfString(TIMESTAMPS_CONF, "INT96"));
    SparkSession.getActiveSession()
        .foreach(s -> out.put("__parallelism", String.valueOf(s.sparkContext().defaultParallelism())));
    if (!options.containsKey("partitionOverwriteMode")) {
      out.put("partitionOverwriteMode", conf.getConfString(OVERWRITE_CONF, "static"));
    }
    return new CaseInsensitiveStringMap(out);
  }
}
