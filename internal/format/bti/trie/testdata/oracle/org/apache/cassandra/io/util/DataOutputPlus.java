package org.apache.cassandra.io.util;
import java.io.DataOutput;
import java.io.IOException;
// Minimal stand-in: what the trie writer and TrieNode call.
public interface DataOutputPlus extends DataOutput {
    long position();
    default void writeMostSignificantBytes(long register, int bytes) throws IOException {
        for (int i = 0; i < bytes; i++) writeByte((int) (register >>> (56 - 8 * i)));
    }
    default int maxBytesInPage() { return 4096; }
    default int bytesLeftInPage() { return 4096 - (int) (position() & 4095); }
    default void padToPageBoundary() throws IOException { long p = position(); long n = ((p + 4095) & -4096L) - p; for (long i = 0; i < n; i++) writeByte(0); }
    default long paddedPosition() { return (position() + 4095) & -4096L; }
}
