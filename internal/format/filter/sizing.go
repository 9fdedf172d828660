package filter

import (
	"fmt"
	"math"
)

// bitsetExcess is the number of bits FilterFactory adds to every filter.
const bitsetExcess = 20

// probs[i][j] is the false-positive rate with i bits per element and j
// hash functions: the table in BloomCalculations.java, which decides the
// size and hash count of every filter Cassandra writes.
var probs = [][]float64{
	{1.0},
	{1.0, 1.0},
	{1.0, 0.393, 0.400},
	{1.0, 0.283, 0.237, 0.253},
	{1.0, 0.221, 0.155, 0.147, 0.160},
	{1.0, 0.181, 0.109, 0.092, 0.092, 0.101},
	{1.0, 0.154, 0.0804, 0.0609, 0.0561, 0.0578, 0.0638},
	{1.0, 0.133, 0.0618, 0.0423, 0.0359, 0.0347, 0.0364},
	{1.0, 0.118, 0.0489, 0.0306, 0.024, 0.0217, 0.0216, 0.0229},
	{1.0, 0.105, 0.0397, 0.0228, 0.0166, 0.0141, 0.0133, 0.0135, 0.0145},
	{1.0, 0.0952, 0.0329, 0.0174, 0.0118, 0.00943, 0.00844, 0.00819, 0.00846},
	{1.0, 0.0869, 0.0276, 0.0136, 0.00864, 0.0065, 0.00552, 0.00513, 0.00509},
	{1.0, 0.08, 0.0236, 0.0108, 0.00646, 0.00459, 0.00371, 0.00329, 0.00314},
	{1.0, 0.074, 0.0203, 0.00875, 0.00492, 0.00332, 0.00255, 0.00217, 0.00199, 0.00194},
	{1.0, 0.0689, 0.0177, 0.00718, 0.00381, 0.00244, 0.00179, 0.00146, 0.00129, 0.00121, 0.0012},
	{1.0, 0.0645, 0.0156, 0.00596, 0.003, 0.00183, 0.00128, 0.001, 0.000852, 0.000775, 0.000744},
	{1.0, 0.0606, 0.0138, 0.005, 0.00239, 0.00139, 0.000935, 0.000702, 0.000574, 0.000505, 0.00047, 0.000459},
	{1.0, 0.0571, 0.0123, 0.00423, 0.00193, 0.00107, 0.000692, 0.000499, 0.000394, 0.000335, 0.000302, 0.000287, 0.000284},
	{1.0, 0.054, 0.0111, 0.00362, 0.00158, 0.000839, 0.000519, 0.00036, 0.000275, 0.000226, 0.000198, 0.000183, 0.000176},
	{1.0, 0.0513, 0.00998, 0.00312, 0.0013, 0.000663, 0.000394, 0.000264, 0.000194, 0.000155, 0.000132, 0.000118, 0.000111, 0.000109},
	{1.0, 0.0488, 0.00906, 0.0027, 0.00108, 0.00053, 0.000303, 0.000196, 0.00014, 0.000108, 8.89e-05, 7.77e-05, 7.12e-05, 6.79e-05, 6.71e-05},
}

// optK[i] is the hash count with the lowest rate for i bits per element
// (the first one on ties), never below 1.
var optK = func() []int {
	k := make([]int, len(probs))
	for i, row := range probs {
		best := math.MaxFloat64
		for j, p := range row {
			if p < best {
				best = p
				k[i] = max(1, j)
			}
		}
	}
	return k
}()

// MinFPChance is the smallest bloom_filter_fp_chance a filter can meet.
var MinFPChance = probs[len(probs)-1][len(probs[len(probs)-1])-1]

// maxBucketsPerElement caps bits per element so the bitset size cannot
// overflow a long.
func maxBucketsPerElement(numElements int64) (int, error) {
	n := max(1, numElements)
	v := float64(math.MaxInt64-bitsetExcess) / float64(n)
	if v < 1 {
		return 0, fmt.Errorf("cannot size a bloom filter for %d elements", numElements)
	}
	return int(min(float64(len(probs)-1), v)), nil
}

// bloomSpec picks the fewest bits per element, then the fewest hashes, that
// keep the false-positive rate at or below fp.
func bloomSpec(maxBuckets int, fp float64) (hashes, buckets int, err error) {
	maxK := len(probs[maxBuckets]) - 1
	if fp >= probs[2][1] {
		// Cassandra passes (2, optK[2]) to a (K, buckets) constructor here,
		// so such filters get 2 hashes and optK[2] = 1 bit per element.
		return 2, optK[2], nil
	}
	if fp < probs[maxBuckets][maxK] {
		return 0, 0, fmt.Errorf("bloom filter fp chance %v cannot be met with %d bits per element (minimum %v)", fp, maxBuckets, probs[maxBuckets][maxK])
	}
	buckets = 2
	k := optK[2]
	for probs[buckets][k] > fp {
		buckets++
		k = optK[buckets]
	}
	for probs[buckets][k-1] <= fp {
		k--
	}
	return k, buckets, nil
}
