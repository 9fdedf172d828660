package org.apache.cassandra.utils.bytecomparable;
public interface ByteComparable {
    ByteSource asComparableBytes(Version version);
    enum Version { LEGACY, OSS50 }
    default String byteComparableAsString(Version version) { return "?"; }
}
