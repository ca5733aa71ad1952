package io.graveler.spark;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A read planned on the driver by the Python data source ({@code graveler_spark.plan}): the
 * pinned commit, the partition columns and the physical files of every partition. Reads with a
 * plan are served by Spark's own Parquet scan ({@link #scanBuilder}) over a {@link
 * PlannedFileIndex}; without one (CSV / JSON, a namespace the JVM cannot open, nanosecond
 * timestamps, the option
 * {@code nativeReads=false}) the Python reader serves them.
 *
 * <p>The plan arrives in the schema the Python side infers ({@code inferSchema}): its first
 * field, {@link #FIELD}, carries the plan's JSON in its metadata. {@link #carriedBy} takes it
 * off again. A read given a schema ({@code .schema(...)}) has no inferred schema, so no plan.
 */
final class NativePlan {
  static final String FIELD = "__graveler_plan";
  static final String PLAN_OPTION = "__plan";
  static final String SCHEMES_OPTION = "__native_schemes";
  static final String NATIVE_OPTION = "nativeReads";
  private static final String S3A = "org.apache.hadoop.fs.s3a.S3AFileSystem";
  private static final ObjectMapper JSON = new ObjectMapper();

  final StructType schema; // what Spark sees: the returned schema without the plan's field
  private final JsonNode doc;
  private final List<StructField> partitionFields;
  private PlannedFileIndex index; // built on first use, then shared by every scan

  private NativePlan(StructType schema, JsonNode doc, List<StructField> parts) {
    this.schema = schema;
    this.doc = doc;
    this.partitionFields = parts;
  }

  boolean isNative() {
    return doc != null;
  }

  /**
   * Whether to ask for a plan: a Parquet read (the default format) not forced to Python.
   * Raises IllegalArgumentException when {@code nativeReads} is not a boolean (the values the
   * Python side's options accept).
   */
  static boolean wanted(CaseInsensitiveStringMap options) {
    return GravelerTableProvider.nativeParquet(options, NATIVE_OPTION);
  }


  /** {@code options} plus the request for a plan. */
  static CaseInsensitiveStringMap request(CaseInsensitiveStringMap options) {
    Map<String, String> out = new HashMap<>(options.asCaseSensitiveMap());
    out.put(PLAN_OPTION, "true");
    out.put(SCHEMES_OPTION, s3aLoads() ? "file,s3" : "file");
    return new CaseInsensitiveStringMap(out);
  }

  private static boolean s3aLoads() {
    try {
      Class.forName(S3A, false, Thread.currentThread().getContextClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * The plan carried by {@code returned} (a schema from the Python side), or null when its
   * first field is not the plan's. The partition columns are looked up by name among the
   * remaining fields.
   */
  static NativePlan carriedBy(StructType returned) {
    StructField[] fields = returned.fields();
    if (fields.length == 0 || !FIELD.equals(fields[0].name())) {
      return null;
    }
    JsonNode doc;
    try {
      doc = JSON.readTree(fields[0].metadata().getString(FIELD));
    } catch (java.io.IOException e) {
      throw new IllegalStateException("graveler: unreadable read plan", e);
    }
    StructType rest = new StructType(Arrays.copyOfRange(fields, 1, fields.length));
    if (!doc.path("native").asBoolean(false)) {
      return new NativePlan(rest, null, List.of());
    }
    List<StructField> parts = new ArrayList<>();
    for (JsonNode c : doc.path("columns")) {
      parts.add(rest.apply(c.asText()));
    }
    return new NativePlan(rest, doc, parts);
  }

  /** Spark's Parquet scan of the planned files, for a table whose schema is {@code table}. */
  ScanBuilder scanBuilder(SparkSession spark, StructType table, CaseInsensitiveStringMap options) {
    List<StructField> data = new ArrayList<>();
    for (StructField f : table.fields()) {
      if (partitionFields.stream().noneMatch(p -> p.name().equalsIgnoreCase(f.name()))) {
        data.add(f);
      }
    }
    StructType dataSchema = new StructType(data.toArray(new StructField[0]));
    return new ParquetScanBuilder(spark, index(spark), table, dataSchema, parquetOptions(options));
  }

  private synchronized PlannedFileIndex index(SparkSession spark) {
    if (index == null) {
      StructType parts = new StructType(partitionFields.toArray(new StructField[0]));
      index = new PlannedFileIndex(spark, root(), parts, groups());
    }
    return index;
  }

  private List<PlannedFileIndex.Group> groups() {
    List<PlannedFileIndex.Group> out = new ArrayList<>();
    for (JsonNode p : doc.path("partitions")) {
      Object[] values = new Object[partitionFields.size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = internal(p.path("values").get(i), partitionFields.get(i).dataType());
      }
      List<FileStatus> files = new ArrayList<>();
      for (JsonNode f : p.path("files")) {
        files.add(PlannedFileIndex.file(f.get(0).asText(), f.get(1).asLong()));
      }
      out.add(new PlannedFileIndex.Group(new GenericInternalRow(values), files));
    }
    return out;
  }

  /** Where the read is, for Spark's plan descriptions: {@code graveler://REPO/REF/PATH}. */
  private Path root() {
    String path = "/" + doc.path("ref").asText() + "/" + doc.path("path").asText("");
    try {
      return new Path("graveler", doc.path("repository").asText("repo"), path);
    } catch (IllegalArgumentException e) {
      return new Path("graveler", null, "/" + doc.path("commit").asText());
    }
  }

  /** A partition value from the plan's JSON as Spark holds it internally for {@code type}. */
  static Object internal(JsonNode v, DataType type) {
    if (v == null || v.isNull()) {
      return null;
    }
    if (type instanceof IntegerType || type instanceof DateType) {
      return v.intValue();
    }
    if (type instanceof LongType || type instanceof TimestampType || type instanceof TimestampNTZType) {
      return v.longValue();
    }
    if (type instanceof DoubleType) {
      return v.isTextual() ? Double.parseDouble(v.asText()) : v.doubleValue();
    }
    if (type instanceof DecimalType d) {
      return Decimal.apply(new BigDecimal(v.asText()), d.precision(), d.scale());
    }
    if (type instanceof BooleanType) {
      return v.asBoolean();
    }
    if (type instanceof StringType) {
      return UTF8String.fromString(v.asText());
    }
    throw new IllegalArgumentException("graveler: no partition values of type " + type.simpleString());
  }

  /** The read's options without graveler's own (connection settings stay out of Hadoop's
   * configuration, which Spark builds from a scan's options). */
  private static CaseInsensitiveStringMap parquetOptions(CaseInsensitiveStringMap options) {
    Map<String, String> out = new HashMap<>();
    for (Map.Entry<String, String> e : options.asCaseSensitiveMap().entrySet()) {
      String k = e.getKey().toLowerCase(Locale.ROOT);
      boolean ours = k.startsWith("__") || k.startsWith("store.") || k.equals("path")
          || k.equals("database_url") || k.equals("home") || k.equals("basepath");
      if (!ours) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return new CaseInsensitiveStringMap(out);
  }
}
