package org.apache.cassandra.utils.bytecomparable;
// Minimal stand-in for the oracle harness: a stream of unsigned bytes.
public interface ByteSource {
    int next();
    int END_OF_STREAM = -1;
    static ByteSource of(byte[] b) {
        return new ByteSource() { int i = 0; public int next() { return i < b.length ? b[i++] & 0xFF : END_OF_STREAM; } };
    }
}
