package org.apache.cassandra.io.util;
import java.io.*;
import java.nio.ByteBuffer;
public class DataOutputBuffer extends DataOutputStream implements DataOutputPlus {
    public DataOutputBuffer() { super(new ByteArrayOutputStream()); }
    public long position() { return size(); }
    public ByteBuffer asNewBuffer() { return ByteBuffer.wrap(((ByteArrayOutputStream) out).toByteArray()); }
}
