package export

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// writeThrough writes data through a writeBehind over f in pieces of
// uneven sizes, as the Parquet writer does, and flushes and closes it.
func writeThrough(t *testing.T, f *os.File, data []byte) {
	t.Helper()
	w := newWriteBehind(f)
	r := rand.New(rand.NewPCG(1, 2))
	for p := data; len(p) > 0; {
		n := min(len(p), 1+r.IntN(300<<10))
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.close()
}

// residentPages is how many of the file's pages are in the page cache.
func residentPages(t *testing.T, path string) (resident, pages int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	// x/sys/unix has no mincore wrapper.
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// The whole chunks go to the disk without the page cache, the last,
// partial one through it; the file holds every byte, in order, whether
// the file system takes direct I/O or not.
func TestWriteBehindWritesWholeChunksDirect(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	directOK := setDirect(probe, true)
	probe.Close()
	for _, size := range []int{0, 1, writeChunk - 1, writeChunk, 3*writeChunk + 12345} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i>>13)
		}
		path := filepath.Join(dir, "out")
		os.Remove(path)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		writeThrough(t, f, data)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		// Before reading it back, which brings it into the page cache.
		if directOK && size >= writeChunk {
			resident, pages := residentPages(t, path)
			tail := (size%writeChunk + os.Getpagesize() - 1) / os.Getpagesize()
			if resident > tail {
				t.Errorf("%d bytes: %d of %d pages in the page cache, want at most the last chunk's %d", size, resident, pages, tail)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("%d bytes written, the file differs (%d bytes)", size, len(got))
		}
	}
	if !directOK {
		t.Logf("%s has no direct I/O: only the bytes were checked", dir)
	}
}

// refusingFile takes O_DIRECT but refuses direct writes with EINVAL,
// as some file systems do.
type refusingFile struct {
	*os.File
	refused int
}

func (f *refusingFile) Write(p []byte) (int, error) {
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err != nil {
		return 0, err
	}
	if flags&unix.O_DIRECT != 0 {
		f.refused++
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.EINVAL}
	}
	return f.File.Write(p)
}

func TestWriteBehindFallsBackWhenDirectWritesAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	osf, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f := &refusingFile{File: osf}
	if !setDirect(f, true) {
		t.Skip("no direct I/O here: nothing to refuse")
	}
	setDirect(f, false)
	data := bytes.Repeat([]byte("sstable"), writeChunk)
	w := newWriteBehind(f)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("a refused direct write failed the file: %v", err)
	}
	w.close()
	osf.Close()
	if f.refused != 1 {
		t.Errorf("%d direct writes refused, want the first only", f.refused)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, data) {
		t.Fatalf("file differs from what was written (%d bytes of %d)", len(got), len(data))
	}
}
