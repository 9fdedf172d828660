package split

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/verify"
)

// verifyOutputs checks the sstables written, where they are before the
// commit: each must pass verify.SSTable (every checksum, the structure,
// the derived components and Statistics.db rebuilt from the rows), and
// together, in order, they must hold exactly the source's partitions the
// filter writes, each the same unfiltered by unfiltered, cell by cell. The
// two run side by side.
func (rw *rewriter) verifyOutputs() error {
	dir := rw.outs.stagedDir()
	paths := make([]string, len(rw.made))
	for i, d := range rw.made {
		paths[i] = d.WithDir(dir).Path(format.ComponentData)
	}
	opts := sstable.Options{Access: rw.o.Access}
	reps := make(chan error, 1)
	go func() {
		for _, p := range paths {
			if r := verify.SSTable(p, opts, nil); !r.OK() {
				var msgs []string
				for _, pr := range r.Problems {
					msgs = append(msgs, pr.String())
				}
				reps <- fmt.Errorf("%s does not verify: %s", p, strings.Join(msgs, "; "))
				return
			}
		}
		reps <- nil
	}()
	cmpErr := rw.sameAsSource(paths, opts)
	verr := <-reps
	switch {
	case verr != nil:
		return fmt.Errorf("%s: an output failed verification, nothing was committed: %w", rw.res.Source, verr)
	case cmpErr != nil:
		return fmt.Errorf("%s: the outputs do not hold what the source does, nothing was committed: %w", rw.res.Source, cmpErr)
	}
	rw.res.Verified = true
	return nil
}

// sameAsSource walks the source and the outputs one after the other in
// step: every partition the filter writes must be the next one of the
// outputs, with the same key, deletion and unfiltereds; no output may be
// empty or hold anything more.
func (rw *rewriter) sameAsSource(paths []string, opts sstable.Options) error {
	part := rw.src.Partitioner()
	sd := rw.src.Decoder(0)
	var hs, ho rows.PartitionHeader
	i := -1
	var out *sstable.SSTable
	var od *rows.Decoder
	defer func() {
		if out != nil {
			out.Close()
		}
	}()
	inOut := 0 // partitions read from the current output
	next := func() error {
		for {
			if od != nil {
				err := od.ReadPartitionHeader(&ho)
				if err == nil {
					inOut++
					return nil
				}
				if !errors.Is(err, io.EOF) {
					return err
				}
				if inOut == 0 {
					return fmt.Errorf("%s holds no partition", paths[i])
				}
				out.Close()
				out, od = nil, nil
			}
			if i+1 >= len(paths) {
				return io.EOF
			}
			i++
			inOut = 0
			var err error
			if out, err = sstable.Open(paths[i], opts); err != nil {
				return err
			}
			od = out.Decoder(0)
		}
	}
	for {
		err := sd.ReadPartitionHeader(&hs)
		if errors.Is(err, io.EOF) {
			switch err := next(); {
			case errors.Is(err, io.EOF):
				return nil
			case err != nil:
				return err
			}
			return fmt.Errorf("%s holds partition %s past the source's last", paths[i], rw.keyText(ho.Key))
		}
		if err != nil {
			return err
		}
		if write, _ := rw.filter.writes(part, hs.Key); !write {
			if err := sd.SkipRest(); err != nil {
				return err
			}
			continue
		}
		switch err := next(); {
		case errors.Is(err, io.EOF):
			return fmt.Errorf("the outputs end before the source's partition %s", rw.keyText(hs.Key))
		case err != nil:
			return err
		}
		if !bytes.Equal(hs.Key, ho.Key) || hs.Deletion != ho.Deletion {
			return fmt.Errorf("%s: partition %d is %s (deletion %+v), the source's is %s (deletion %+v)", paths[i], inOut-1,
				rw.keyText(ho.Key), ho.Deletion, rw.keyText(hs.Key), hs.Deletion)
		}
		for k := 0; ; k++ {
			a, err := sd.Next(false)
			if err != nil {
				return err
			}
			b, err := od.Next(false)
			if err != nil {
				return err
			}
			if a == nil || b == nil {
				if a != b {
					return fmt.Errorf("%s: partition %s: one holds more unfiltereds than the other after %d", paths[i], rw.keyText(hs.Key), k)
				}
				break
			}
			if !convert.SameUnfiltered(a, b) {
				return fmt.Errorf("%s: partition %s, unfiltered %d (source byte %d) differs:\n%s", paths[i], rw.keyText(hs.Key), k, a.Offset, convert.DescribeDiff(a, b))
			}
		}
	}
}
