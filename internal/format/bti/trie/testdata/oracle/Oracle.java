import java.io.*;
import java.util.*;
import org.apache.cassandra.io.tries.*;
import org.apache.cassandra.io.util.*;
import org.apache.cassandra.utils.bytecomparable.*;

// Reads "hexkey position" lines (keys sorted), writes a trie with the
// partition-index payload layout (hash byte 0x5A, sized position) through
// Cassandra's IncrementalTrieWriter, after `lead` zero bytes; prints the
// root position and writes the bytes to the output file.
public class Oracle {
    static class Payload { long pos; Payload(long p) { pos = p; } }
    public static void main(String[] a) throws Exception {
        int lead = Integer.parseInt(a[2]);
        boolean rows = a.length > 3 && a[3].equals("rows");
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        DataOutputStreamPlus out = new DataOutputStreamPlus(bo);
        for (int i = 0; i < lead; i++) out.writeByte(0);
        TrieSerializer<Payload, DataOutputPlus> ser = new TrieSerializer<>() {
            public int sizeofNode(SerializationNode<Payload> n, long p) {
                int s = TrieNode.typeFor(n, p).sizeofNode(n);
                if (n.payload() != null) s += rows ? SizedInts.nonZeroSize(n.payload().pos) : 1 + SizedInts.nonZeroSize(n.payload().pos);
                return s;
            }
            public void write(DataOutputPlus d, SerializationNode<Payload> n, long p) throws IOException {
                TrieNode t = TrieNode.typeFor(n, p);
                Payload pl = n.payload();
                if (pl == null) { t.serialize(d, n, 0, p); return; }
                int size = SizedInts.nonZeroSize(pl.pos);
                t.serialize(d, n, rows ? size : 8 + size - 1, p);
                if (!rows) d.writeByte(0x5A);
                SizedInts.write(d, pl.pos, size);
            }
        };
        IncrementalTrieWriter<Payload> w = IncrementalTrieWriter.open(ser, out);
        BufferedReader r = new BufferedReader(new FileReader(a[0]));
        String line;
        while ((line = r.readLine()) != null) {
            String[] f = line.split(" ");
            byte[] k = HexFormat.of().parseHex(f[0].equals("-") ? "" : f[0]);
            w.add(v -> ByteSource.of(k), new Payload(Long.parseLong(f[1])));
        }
        long root = w.complete();
        out.flush();
        try (FileOutputStream fo = new FileOutputStream(a[1])) { fo.write(bo.toByteArray()); }
        System.out.println(root);
    }
    static class DataOutputStreamPlus extends DataOutputStream implements DataOutputPlus {
        DataOutputStreamPlus(OutputStream o) { super(o); }
        public long position() { return size(); }
    }
}
