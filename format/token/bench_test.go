package token

import (
	"hash/maphash"
	"testing"

	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

// Baselines, measured in the same run: hash/maphash (the standard library's
// fastest allocation-free hash) shows what touching every key byte costs,
// and the bare Murmur3 hash shows the partitioner's own overhead.
var benchKey = []byte("user:0123456789abcdef") // 21 bytes: one block and a tail

var seed = maphash.MakeSeed()

func BenchmarkTokenBaselineMaphash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		maphash.Bytes(seed, benchKey)
	}
}

func BenchmarkTokenBaselineMurmurHash(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		murmur.Hash128(benchKey, 0)
	}
}

func BenchmarkTokenMurmur3(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Murmur3.Token(benchKey)
	}
}

func BenchmarkTokenRandom(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Random.Token(benchKey)
	}
}

func BenchmarkCompareKeysMurmur3(b *testing.B) {
	other := []byte("user:0123456789abcdeg")
	b.ReportAllocs()
	for b.Loop() {
		Murmur3.CompareKeys(benchKey, other)
	}
}
