package token

import (
	"hash/fnv"
	"testing"
)

// The baseline is FNV-1a over the same key: the cheapest reasonable hash in
// the standard library, so the ratio shows what Murmur3 tokens cost on top
// of touching every key byte.
var benchKey = []byte("user:0123456789abcdef") // 21 bytes: one block and a tail

func BenchmarkTokenBaselineFNV(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		h := fnv.New64a()
		h.Write(benchKey)
		_ = h.Sum64()
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
