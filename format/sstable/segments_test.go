package sstable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// seen is what a test walk records of each partition: enough to tell two
// walks apart (position, key, every unfiltered's offset and cell count).
type seen struct{ lines []string }

func recordPartition(h *rows.PartitionHeader, dec *rows.Decoder, r *seen) error {
	line := fmt.Sprintf("%d %x:", h.Offset, h.Key)
	for {
		u, err := dec.Next(false)
		if err != nil {
			r.lines = append(r.lines, line+" error")
			return err
		}
		if u == nil {
			break
		}
		line += fmt.Sprintf(" %d/%d", u.Offset, len(u.Cells))
	}
	r.lines = append(r.lines, line)
	return nil
}

// oneDecoder is the reference: EachPartition, one decoder from the start.
func oneDecoder(s *SSTable) ([]string, string) {
	var r seen
	err := s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		return recordPartition(h, dec, &r)
	})
	return r.lines, errString(err)
}

func segmented(s *SSTable, o SegmentOptions) ([]string, string) {
	var out []string
	err := Segmented(s, o, func(r *seen) { r.lines = r.lines[:0] }, nil, recordPartition,
		func(r *seen) error { out = append(out, r.lines...); return nil })
	return out, errString(err)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// segmentTables are the tables Segmented is held to EachPartition on: a
// generated one of the demo profile (clustered, static rows, markers, big
// partitions) both compressed and not, and every fixture.
func segmentTables(t *testing.T) []string {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 60
	var out []string
	for _, uncompressed := range []bool{false, true} {
		res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc"), Uncompressed: uncompressed})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.DataPath)
	}
	if fixtures.Root() != "" {
		out = append(out, fixtures.DataFiles(t)...)
	}
	return out
}

// TestSegmentedMatchesOneDecoder holds Segmented to one decoder: the same
// partitions in the same order, on one worker and several, with segments
// cut at Index.db's partition starts and at positions that are no
// partition start at all (every Index.db would have to lie for that).
func TestSegmentedMatchesOneDecoder(t *testing.T) {
	for _, p := range segmentTables(t) {
		s, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := oneDecoder(s)
		length := s.data.Length()
		every := func(step int64) func(func(Cut) bool) {
			return func(send func(Cut) bool) {
				for pos := step; pos < length; pos += step {
					if !send(Cut{pos, -1}) {
						return
					}
				}
			}
		}
		cases := []struct {
			name string
			o    SegmentOptions
		}{
			{"serial", SegmentOptions{Workers: 1, Size: 1}},
			{"index/2", SegmentOptions{Workers: 2, Size: 1}},
			{"index/3/4KiB", SegmentOptions{Workers: 3, Size: 4 << 10}},
			{"every-97/2", SegmentOptions{Workers: 2, Size: 1, Cuts: every(97)}},
			{"every-4093/4", SegmentOptions{Workers: 4, Size: 1, Cuts: every(4093)}},
			{"not-increasing/2", SegmentOptions{Workers: 2, Size: 1, Cuts: func(send func(Cut) bool) {
				send(Cut{length / 2, -1})
				send(Cut{length / 3, -1})
				send(Cut{length / 2, -1})
			}}},
		}
		for _, c := range cases {
			got, gotErr := segmented(s, c.o)
			name := filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p) + "/" + c.name
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: partitions differ from one decoder's (-want +got):\n%s", name, d)
			}
			if gotErr != wantErr {
				t.Errorf("%s: error %q, one decoder's %q", name, gotErr, wantErr)
			}
		}
		s.Close()
	}
}

// TestSegmentedDamaged holds Segmented to one decoder on damaged data:
// the partitions before the damage, then the same error.
func TestSegmentedDamaged(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 40
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("nc"), Uncompressed: true})
	if err != nil {
		t.Fatal(err)
	}
	clean, err := os.ReadFile(res.DataPath)
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i := 1; i < 40; i++ {
		at := len(clean) * i / 40
		b := append([]byte(nil), clean...)
		b[at] ^= 0x5A
		b[at+1] ^= 0xA5
		dir := fixtures.CopyTable(t, filepath.Dir(res.DataPath))
		path := filepath.Join(dir, filepath.Base(res.DataPath))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fixtures.ResealCRC(t, path)
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := oneDecoder(s)
		if wantErr != "" {
			failed++
		}
		for _, o := range []SegmentOptions{{Workers: 2, Size: 1}, {Workers: 3, Size: 2048}} {
			got, gotErr := segmented(s, o)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("damage at %d, %+v: partitions differ (-want +got):\n%s", at, o, d)
			}
			if gotErr != wantErr {
				t.Errorf("damage at %d, %+v: error %q, one decoder's %q", at, o, gotErr, wantErr)
			}
		}
		s.Close()
	}
	if failed == 0 {
		t.Error("no damage made the decoder fail: the test tests nothing")
	}
}

// TestSegmentedDeliverError: deliver's error ends the walk as it is.
func TestSegmentedDeliverError(t *testing.T) {
	tables := segmentTables(t)
	s, err := Open(tables[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, workers := range []int{1, 2} {
		n := 0
		err := Segmented(s, SegmentOptions{Workers: workers, Size: 1}, func(r *seen) { r.lines = r.lines[:0] }, nil, recordPartition,
			func(r *seen) error {
				if n++; n == 3 {
					return fmt.Errorf("stop here")
				}
				return nil
			})
		if err == nil || !strings.Contains(err.Error(), "stop here") || n != 3 {
			t.Errorf("workers %d: err %v after %d deliveries, want deliver's error after 3", workers, err, n)
		}
	}
}

// TestSegmentedStop: when the walk ends early, Stop is called before the
// workers are waited for, so a part that waits for a later delivery (a
// caller that streams segments in order) can return: every segment but the
// first waits for Stop, deliver fails on the first, and the walk returns
// deliver's error rather than hanging.
func TestSegmentedStop(t *testing.T) {
	tables := segmentTables(t)
	s, err := Open(tables[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stopped := make(chan struct{})
	stops := 0
	done := make(chan error, 1)
	go func() {
		done <- Segmented(s, SegmentOptions{Workers: 2, Size: 1, Stop: func() { stops++; close(stopped) }},
			func(r *seen) { r.lines = r.lines[:0] },
			func(seg Segment, _ *rows.Decoder, _ *seen) error {
				if seg.Start > 0 && !seg.Serial {
					<-stopped
					return errors.New("stopped")
				}
				return nil
			}, recordPartition,
			func(*seen) error { return fmt.Errorf("stop here") })
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stop here") || stops != 1 {
			t.Errorf("err %v, Stop called %d times: want deliver's error, Stop once", err, stops)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the walk waits for workers that wait for Stop")
	}
}

// TestSegmentedErrSerial: a segment deliver refuses with ErrSerial is
// walked again, with what follows, on the calling goroutine (Serial
// segments, begun where the one before stopped), and the whole is still
// one decoder's walk.
func TestSegmentedErrSerial(t *testing.T) {
	tables := segmentTables(t)
	s, err := Open(tables[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want, _ := oneDecoder(s)
	for _, refuse := range []int{1, 2, 5} {
		var got []string
		n, serialSeen, lastEnd := 0, false, int64(-1)
		err := Segmented(s, SegmentOptions{Workers: 2, Size: 1},
			func(r *seen) { r.lines = r.lines[:0] },
			func(seg Segment, dec *rows.Decoder, r *seen) error {
				if seg.Serial {
					if seg.Index != -1 || dec.Pos() != seg.Start || (lastEnd >= 0 && seg.Start < lastEnd) {
						return fmt.Errorf("serial segment %+v at %d", seg, dec.Pos())
					}
					serialSeen, lastEnd = true, seg.End
				} else if seg.Start == 0 && seg.Index != 0 {
					return fmt.Errorf("first segment %+v: Index.db's first entry is at 0", seg)
				}
				return nil
			}, recordPartition,
			func(r *seen) error {
				if n++; n == refuse {
					return ErrSerial
				}
				got = append(got, r.lines...)
				return nil
			})
		if err != nil {
			t.Fatalf("refusing delivery %d: %v", refuse, err)
		}
		if !serialSeen {
			t.Errorf("refusing delivery %d: no serial segment followed", refuse)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("refusing delivery %d: partitions differ (-want +got):\n%s", refuse, d)
		}
	}
}

// TestSegmentedIndexPositions: a segment cut at an Index.db entry carries
// that entry's position, whose entry points at the segment's start.
func TestSegmentedIndexPositions(t *testing.T) {
	tables := segmentTables(t)
	s, err := Open(tables[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	segments := 0
	err = Segmented(s, SegmentOptions{Workers: 2, Size: 1}, func(*seen) {},
		func(seg Segment, dec *rows.Decoder, r *seen) error {
			if seg.Serial || seg.Index < 0 {
				return fmt.Errorf("segment %+v: want a cut at an Index.db entry", seg)
			}
			sc := index.NewScanner(s.indexFile, s.indexCodec, seg.Index, false)
			if !sc.Next() || sc.Entry().Position != seg.Start {
				return fmt.Errorf("segment %+v: the entry at Index.db byte %d points at %d", seg, seg.Index, sc.Entry().Position)
			}
			return nil
		}, recordPartition,
		func(*seen) error { segments++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if segments < 3 {
		t.Errorf("%d segments: the test needs a table of several", segments)
	}
}

// streamed is a Streamer: its worker hands each partition's line on
// through a queue of one, which Stream empties from the segment's turn on.
type streamed struct {
	serial bool
	queue  chan string
	abort  <-chan struct{}
	out    *[]string
	fail   int // Stream fails after this many lines in all (0: never)
}

func (r *streamed) Stream(ended <-chan struct{}) error {
	take := func(line string) error {
		*r.out = append(*r.out, line)
		if r.fail > 0 && len(*r.out) >= r.fail {
			return errors.New("stream failed")
		}
		return nil
	}
	for {
		select {
		case line := <-r.queue:
			if err := take(line); err != nil {
				return err
			}
		case <-ended:
			for len(r.queue) > 0 {
				if err := take(<-r.queue); err != nil {
					return err
				}
			}
			return nil
		}
	}
}

// streamWalk walks s with Segmented, each segment streamed.
func streamWalk(s *SSTable, o SegmentOptions, fail int) ([]string, string) {
	var out []string
	abort := make(chan struct{})
	o.Stop = func() { close(abort) }
	err := Segmented(s, o,
		func(r *streamed) {
			if r.queue == nil {
				r.queue = make(chan string, 1)
			}
			r.abort, r.out, r.fail = abort, &out, fail
		},
		func(seg Segment, _ *rows.Decoder, r *streamed) error { r.serial = seg.Serial; return nil },
		func(h *rows.PartitionHeader, dec *rows.Decoder, r *streamed) error {
			var one seen
			err := recordPartition(h, dec, &one)
			for _, line := range one.lines {
				if r.serial {
					out = append(out, line) // the calling goroutine's own walk
					continue
				}
				select {
				case r.queue <- line:
				case <-r.abort:
					return errors.New("aborted")
				}
			}
			return err
		},
		func(*streamed) error { return nil })
	return out, errString(err)
}

// TestSegmentedStreams holds a streaming walk (each segment a Streamer,
// its worker waiting for its turn once its queue is full) to one decoder,
// with Index.db's cuts and cuts that are no partition start; and a
// Stream that fails ends the walk with its error, without waiting for
// workers that wait for their turn.
func TestSegmentedStreams(t *testing.T) {
	for _, p := range segmentTables(t) {
		s, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := oneDecoder(s)
		length := s.data.Length()
		every97 := func(send func(Cut) bool) {
			for pos := int64(97); pos < length; pos += 97 {
				if !send(Cut{pos, -1}) {
					return
				}
			}
		}
		name := filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
		for _, o := range []SegmentOptions{{Workers: 2, Size: 1}, {Workers: 3, Size: 4 << 10}, {Workers: 2, Size: 1, Cuts: every97}} {
			got, gotErr := streamWalk(s, o, 0)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s, %d workers: partitions differ from one decoder's (-want +got):\n%s", name, o.Workers, d)
			}
			if gotErr != wantErr {
				t.Errorf("%s, %d workers: error %q, one decoder's %q", name, o.Workers, gotErr, wantErr)
			}
		}
		s.Close()
	}
	// The generated table (Index.db's cuts, a segment per partition).
	s, err := Open(segmentTables(t)[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan string, 1)
	go func() { _, err := streamWalk(s, SegmentOptions{Workers: 2, Size: 1}, 3); done <- err }()
	select {
	case err := <-done:
		if err != "stream failed" {
			t.Errorf("a failing Stream: error %q", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the walk waits for workers that wait for their turn")
	}
}

// TestDecoderAt: one decoder moved from partition to partition, back and
// forth, reads what a new decoder at each reads, and moved past the data
// fails as a new one there does.
func TestDecoderAt(t *testing.T) {
	for _, p := range segmentTables(t)[:2] {
		s, err := Open(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var offsets []int64
		if err := s.ScanPartitions(ScanOptions{SkipCells: true}, func(ps *PartitionSummary) error {
			offsets = append(offsets, ps.Offset)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		read := func(dec *rows.Decoder) string {
			var h rows.PartitionHeader
			if err := dec.ReadPartitionHeader(&h); err != nil {
				return "error: " + err.Error()
			}
			var r seen
			if err := recordPartition(&h, dec, &r); err != nil {
				return "error: " + err.Error()
			}
			return r.lines[0]
		}
		var dec *rows.Decoder
		n := len(offsets)
		for i := range n {
			off := offsets[(i*7)%n] // every partition, out of order
			dec = s.DecoderAt(dec, off)
			if got, want := read(dec), read(s.Decoder(off)); got != want {
				t.Errorf("%s at %d: moved decoder read %q, a new one %q", p, off, got, want)
			}
		}
		past := s.Data().Length() + 1
		if got, want := read(s.DecoderAt(dec, past)), read(s.Decoder(past)); got != want || !strings.HasPrefix(got, "error") {
			t.Errorf("%s past the data: moved decoder read %q, a new one %q", p, got, want)
		}
		s.Close()
	}
}
