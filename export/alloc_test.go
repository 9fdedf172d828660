package export

import "testing"

// TestBufferPoolReusesZeroed: a freed buffer comes back for the next
// allocation of its size class, zeroed as Go's allocator gives memory,
// growing keeps the bytes, and the pool holds at most poolBytes.
func TestBufferPoolReusesZeroed(t *testing.T) {
	p := &bufferPool{}
	b := p.Allocate(100 << 10)
	if len(b) != 100<<10 || cap(b) != 128<<10 {
		t.Fatalf("Allocate(100 KiB): len %d cap %d, want 102400 and 131072", len(b), cap(b))
	}
	for i := range b[:cap(b)] {
		b[:cap(b)][i] = 0xAB
	}
	p.Free(b)
	c := p.Allocate(90 << 10)
	if &c[:1][0] != &b[:1][0] {
		t.Fatal("a freed buffer of the class was not reused")
	}
	for i, v := range c[:cap(c)] {
		if v != 0 {
			t.Fatalf("reused buffer byte %d is %#x, want 0", i, v)
		}
	}
	c[0], c[len(c)-1] = 1, 2
	d := p.Reallocate(300<<10, c)
	if len(d) != 300<<10 || d[0] != 1 || d[90<<10-1] != 2 || d[90<<10] != 0 {
		t.Fatalf("Reallocate lost the bytes: len %d, %d %d %d", len(d), d[0], d[90<<10-1], d[90<<10])
	}
	if p.pooled != 128<<10 {
		t.Fatalf("after Reallocate the pool holds %d bytes, want the old buffer's 131072", p.pooled)
	}
	for range 2 * poolBytes / (1 << 20) {
		p.Free(make([]byte, 0, 1<<20))
	}
	if p.pooled > poolBytes {
		t.Fatalf("the pool holds %d bytes, more than %d", p.pooled, poolBytes)
	}
	if s := p.Allocate(1000); len(s) != 1000 {
		t.Fatalf("a small Allocate gave %d bytes", len(s))
	}
}
