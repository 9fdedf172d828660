package org.apache.cassandra.io.tries;
import org.apache.cassandra.utils.bytecomparable.ByteComparable;
// Stand-in: only the constant the writer uses.
public class Walker { public static final ByteComparable.Version BYTE_COMPARABLE_VERSION = ByteComparable.Version.OSS50; }
