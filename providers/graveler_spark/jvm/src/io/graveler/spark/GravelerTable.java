package io.graveler.spark;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.spark.sql.SparkSession;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The Python table, declaring the partitioning the writer asked for; reads with a native plan
 * go to Spark's Parquet scan instead (see {@link NativePlan}), batch writes of Parquet to
 * Spark's Parquet writer (see {@link NativeWrite}).
 *
 * <p>The plan is pinned for the table's life (one DataFrame): every query of it reads the same
 * files.
 */
final class GravelerTable implements SupportsRead, SupportsWrite {
  private final Table python;
  private final Transform[] partitioning;
  private final StructType schema;
  private final NativePlan plan; // null: the Python reader reads
  private final boolean nativeWrites; // batch writes go through NativeWrite (V1_BATCH_WRITE)

  GravelerTable(
      Table python, Transform[] partitioning, StructType schema, NativePlan plan, boolean nativeWrites) {
    this.python = python;
    this.partitioning = partitioning;
    this.schema = schema;
    this.plan = plan;
    this.nativeWrites = nativeWrites;
  }

  @Override
  public String name() {
    return python.name();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Transform[] partitioning() {
    return partitioning;
  }

  @Override
  public Set<TableCapability> capabilities() {
    if (!nativeWrites) {
      return python.capabilities();
    }
    Set<TableCapability> out = EnumSet.noneOf(TableCapability.class);
    out.addAll(python.capabilities());
    out.add(TableCapability.V1_BATCH_WRITE);
    return out;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    if (plan != null && plan.isNative()) {
      return plan.scanBuilder(SparkSession.active(), schema, options);
    }
    return ((SupportsRead) python).newScanBuilder(GravelerTableProvider.withSession(options));
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    Map<String, String> options =
        new HashMap<>(GravelerTableProvider.withSession(info.options()).asCaseSensitiveMap());
    List<String> columns = partitionColumns();
    if (!columns.isEmpty()) {
      options.put("partitionBy", String.join(",", columns));
    }
    WriteBuilder builder = ((SupportsWrite) python).newWriteBuilder(new WriteInfo(info, options));
    return nativeWrites ? NativeWrite.builder(builder, options) : builder;
  }

  /** Names of identity-partition columns; other transforms (bucket, days...) are refused. */
  private List<String> partitionColumns() {
    List<String> names = new ArrayList<>();
    for (Transform t : partitioning) {
      NamedReference[] refs = t.references();
      if (!"identity".equals(t.name()) || refs.length != 1) {
        throw new IllegalArgumentException(
            "graveler tables are partitioned by columns (partitionBy), not by " + t.describe());
      }
      names.add(String.join(".", refs[0].fieldNames()));
    }
    return names;
  }

  /** The writer's logical info with extra options. */
  private static final class WriteInfo implements LogicalWriteInfo {
    private final LogicalWriteInfo info;
    private final CaseInsensitiveStringMap options;

    WriteInfo(LogicalWriteInfo info, Map<String, String> options) {
      this.info = info;
      this.options = new CaseInsensitiveStringMap(options);
    }

    @Override
    public CaseInsensitiveStringMap options() {
      return options;
    }

    @Override
    public String queryId() {
      return info.queryId();
    }

    @Override
    public StructType schema() {
      return info.schema();
    }

    @Override
    public Optional<StructType> rowIdSchema() {
      return info.rowIdSchema();
    }

    @Override
    public Optional<StructType> metadataSchema() {
      return info.metadataSchema();
    }
  }
}
