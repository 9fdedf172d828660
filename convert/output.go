package convert

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/verify"
)

// Every rewrite here (Convert, Merge, ConvertTo) ends the same way: the
// components are written through a writer.Output (a staging directory,
// the caller's files, or counters for an estimate), then, when asked,
// the written sstable is verified (checkWritten), and a staged one is
// committed (staged).

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
	return res, verifyWritten(res, res.Output, o.Verify, func(data string, res *Result) error { return verifyOutput(src, data, o, res) })
}

// staged writes an sstable named desc (its directory the destination)
// crash-safely (see package writer): write produces every component
// through the staging directory's Output; with verify, check then reads
// the staged Data.db back; only then is the staging committed, Data.db
// last. Anything short of that leaves the destination as it was. The
// result comes back even when verification fails, with the error.
func staged(fsys vfs.FS, desc format.Descriptor, verify bool, write func(out writer.Output, dir string) (*Result, error), check func(data string, res *Result) error) (*Result, error) {
	st, err := writer.NewStaging(fsys, desc.Dir, desc.Prefix())
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			st.Abort()
		}
	}()
	res, err := write(st.Output(), st.Dir())
	if res != nil {
		res.Recovered = st.Recovered()
	}
	if err != nil {
		return res, err
	}
	stagedData := desc.WithDir(st.Dir()).Path(format.ComponentData)
	if err := verifyWritten(res, stagedData, verify, check); err != nil {
		return res, err
	}
	if err := st.Commit(); err != nil {
		return res, err
	}
	committed = true
	res.Output = desc.Path(format.ComponentData)
	return res, nil
}

// verifyWritten runs check on the written Data.db when asked, and records
// that it passed.
func verifyWritten(res *Result, data string, verify bool, check func(data string, res *Result) error) error {
	if !verify {
		return nil
	}
	if err := check(data, res); err != nil {
		return err
	}
	res.Verified = true
	return nil
}

// checkWritten is the verdict of every rewrite's verification: verify's
// report on the written sstable (every checksum and the structure) must
// hold no problem, and the content comparison (with the source, or with a
// second merge of the inputs) no difference. what names the rewrite
// ("converted <source>"). Both findings go to res.Problems.
func checkWritten(what string, rep *verify.Report, cmpErr error, res *Result) error {
	if !rep.OK() {
		for _, p := range rep.Problems {
			res.Problems = append(res.Problems, p.String())
		}
		return fmt.Errorf("verification of the %s failed (%d problems; output discarded): %s", what, len(rep.Problems), rep.Problems[0])
	}
	if cmpErr != nil {
		res.Problems = append(res.Problems, cmpErr.Error())
		return fmt.Errorf("verification of the %s failed (output discarded): %w", what, cmpErr)
	}
	return nil
}

// outputSink creates rewrite's components through an Output under their
// sstable's prefix, counting what each holds.
type outputSink struct {
	files  writer.Output
	prefix string
}

func (s outputSink) create(name string) (io.Writer, func() (int64, error), error) {
	f, err := s.files.Create(s.prefix + name)
	if err != nil {
		return nil, nil, err
	}
	c := &vfs.CountingWriter{W: f}
	return c, func() (int64, error) { return c.N, f.Close() }, nil
}

// countingOutput takes the bytes of every component and only counts
// them (an estimate's output).
type countingOutput struct{}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Close() error                { return nil }

func (countingOutput) Create(string) (io.WriteCloser, error) { return discard{}, nil }
