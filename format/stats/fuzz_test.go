package stats

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format"
)

var fuzzVersions = []string{"ma", "mb", "mc", "md", "me", "na", "nb", "nc", "oa"}

// FuzzDecode feeds arbitrary bytes to Decode in every version. Decoding
// must fail with a CorruptError inside the input or succeed; what decodes
// must encode, decode back to the same values and re-encode identically,
// and converting it across the oa layout change must not break that.
func FuzzDecode(f *testing.F) {
	for _, sf := range statsFiles(f) {
		for i, name := range fuzzVersions {
			if name == sf.v.Name {
				f.Add(byte(i), sf.b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, vi byte, b []byte) {
		v := format.MustVersion(fuzzVersions[int(vi)%len(fuzzVersions)])
		s, err := Decode(b, v)
		if err != nil {
			ce, ok := errors.AsType[*corrupt.Error](err)
			if !ok || ce.Component != ComponentName || ce.Offset < 0 || ce.Offset > int64(len(b)) || ce.Expected == "" {
				t.Fatalf("error %v is not a CorruptError placed inside the %d-byte input", err, len(b))
			}
			return
		}
		out, err := s.Encode(v)
		if err != nil {
			t.Fatalf("decoded statistics do not encode: %v", err)
		}
		again, err := Decode(out, v)
		if err != nil {
			t.Fatalf("our encoding does not decode: %v", err)
		}
		if !cmp.Equal(s, again, cmpStats...) {
			t.Fatalf("values change through Encode:\n%s", cmp.Diff(s, again, cmpStats...))
		}
		if out2, _ := again.Encode(v); !bytes.Equal(out, out2) {
			t.Fatalf("re-encoding is not stable")
		}
		// Convert across the layout change (legacy <-> oa) and encode.
		to := format.MustVersion("oa")
		if v.HasUIntDeletionTime {
			to = format.MustVersion("nc")
		}
		c, _, err := s.Convert(to)
		if err != nil {
			t.Fatalf("Convert(%s): %v", to, err)
		}
		if c.Stats != nil && c.Stats.FirstKey == nil {
			c.Stats.FirstKey, c.Stats.LastKey = []byte{}, []byte{}
		}
		if cb, err := c.Encode(to); err == nil {
			d, err := Decode(cb, to)
			if err != nil {
				t.Fatalf("Convert(%s) encodes bytes that do not decode: %v", to, err)
			}
			if !cmp.Equal(c, d, cmpStats...) {
				t.Fatalf("Convert(%s) gives values its own encoding does not decode to:\n%s", to, cmp.Diff(c, d, cmpStats...))
			}
		}
	})
}
