package convert

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// Output creates the files of a conversion written by ConvertTo.
type Output interface {
	// Create creates the file name (a full component file name such as
	// "oa-5-big-Data.db") in the output's directory. Close must leave it
	// durable (fsynced): ConvertTo verifies and returns only after every
	// file is closed.
	Create(name string) (io.WriteCloser, error)
}

// ConvertTo rewrites the sstable at srcPath (any component) as out: its
// directory, id and version (which must be o.To's), creating every
// component through files. Unlike Convert it stages nothing and commits
// nothing: the files are written under their final names and the caller
// makes that crash-safe (package upgrade does it with Cassandra's
// transaction log, so that Cassandra's own startup cleanup removes a
// half-written sstable). With o.Verify the sstable is re-read from out's
// paths once every file is closed. It returns the result even on a
// verification failure, with the error.
func ConvertTo(srcPath string, out format.Descriptor, files Output, o Options) (*Result, error) {
	if out.Version.Name != o.To.Name || out.Version.Format != o.To.Format {
		return nil, fmt.Errorf("convert: output %s is not in the target version %s", out, o.To.Name)
	}
	src, err := sstable.Open(srcPath, sstable.Options{Access: o.Access})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	res, err := rewrite(src, o, outputSink{files: files, prefix: out.Prefix()})
	if err != nil {
		return res, err
	}
	res.Output = out.Path(format.ComponentData)
	if o.Verify {
		if err := verifyOutput(src, res.Output, o, res); err != nil {
			return res, err
		}
		res.Verified = true
	}
	return res, nil
}

type outputSink struct {
	files  Output
	prefix string
}

func (s outputSink) create(name string) (io.Writer, func() (int64, error), error) {
	f, err := s.files.Create(s.prefix + name)
	if err != nil {
		return nil, nil, err
	}
	c := &countingWriter{w: f}
	return c, func() (int64, error) { return c.n, f.Close() }, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
