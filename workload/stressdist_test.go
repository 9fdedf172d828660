package workload

import (
	"math"
	"strings"
	"testing"
)

// quantiles draws d at n evenly spaced points of (0, 1): the values a
// large number of draws would give, in order.
func quantiles(d *stressDist, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = d.long((float64(i) + 0.5) / float64(n))
	}
	return out
}

func meanSD(v []int64) (mean, sd float64) {
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (float64(x) - mean) * (float64(x) - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)))
}

func share(v []int64, want int64) float64 {
	n := 0
	for _, x := range v {
		if x == want {
			n++
		}
	}
	return float64(n) / float64(len(v))
}

func mustDist(t *testing.T, s string) *stressDist {
	t.Helper()
	d, err := parseStressDist(s)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return &d
}

// The distributions follow OptionDistribution.java's definitions: the
// bounds, the gaussian's mean and deviation from the range and stdvrng,
// the exponential and Weibull scaled so that the top of the range is the
// quantile 1-sqrt(1/(max-min)) (so that share of draws is clamped to max),
// the ~ inversion and the k/m/b suffixes.
func TestStressDistributions(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		spec     string
		min, max int64
	}{
		{"fixed(7)", 7, 7}, {"FIXED(2k)", 2000, 2000}, {"uniform(1..100B)", 1, 100_000_000_000},
		{"uniform(1..10)", 1, 10}, {"uniform(3...9)", 3, 9}, {"gaussian(1..1000)", 1, 1000}, {"norm(5..7)", 5, 7},
		{"exp(1..1000)", 1, 1000}, {"~exp(1..1000)", 1, 1000}, {"extreme(1..1000,2)", 1, 1000},
		{"weibull(1..1000,2)", 1, 1000}, {"qextreme(1..1000,2,4)", 1, 1000}, {"seq(1..5)", 1, 5},
		{"uniform(-5..5)", -5, 5}, {"gaussian(20..20)", 20, 20},
	} {
		d := mustDist(t, c.spec)
		if d.minValue() != c.min || d.maxValue() != c.max {
			t.Errorf("%s: bounds %d..%d, want %d..%d", c.spec, d.minValue(), d.maxValue(), c.min, c.max)
		}
		for _, v := range quantiles(d, 1000) {
			if v < c.min || v > c.max {
				t.Fatalf("%s: drew %d outside %d..%d", c.spec, v, c.min, c.max)
			}
		}
	}

	// uniform: every value equally often
	u := quantiles(mustDist(t, "uniform(1..4)"), n)
	for v := int64(1); v <= 4; v++ {
		if s := share(u, v); math.Abs(s-0.25) > 0.001 {
			t.Errorf("uniform(1..4): %d drawn %.3f of the time", v, s)
		}
	}
	// gaussian(min..max): mean the middle, sd (max-min)/2/3; with stdvrng
	// the divisor is stdvrng; with mean and stdev they are given.
	for _, c := range []struct {
		spec     string
		mean, sd float64
	}{
		{"gaussian(1..1000)", 500.5, 999.0 / 6}, {"gauss(0..100,5)", 50, 10}, {"normal(0..1000,300,20)", 300, 20},
	} {
		m, sd := meanSD(quantiles(mustDist(t, c.spec), n))
		if math.Abs(m-c.mean) > 1 || math.Abs(sd-c.sd) > c.sd*0.02 {
			t.Errorf("%s: mean %.1f sd %.1f, want %.1f and %.1f", c.spec, m, sd, c.mean, c.sd)
		}
	}
	// exp and extreme: sqrt(1/(max-min)) of the draws land on max; the
	// smallest values are the most frequent, the largest once inverted.
	for _, spec := range []string{"exp(1..1000)", "extreme(1..1000,1.5)"} {
		v := quantiles(mustDist(t, spec), n)
		if s, want := share(v, 1000), math.Sqrt(1/999.0); math.Abs(s-want) > 0.002 {
			t.Errorf("%s: %.4f of draws at max, want %.4f", spec, s, want)
		}
		inv := quantiles(mustDist(t, "~"+spec), n)
		if share(inv, 1) != share(v, 1000) || share(inv, 1000) != share(v, 1) {
			t.Errorf("~%s is not %s mirrored", spec, spec)
		}
	}
	// exp's mean: (max-min) / (ln(max-min)/2) before clamping and truncation.
	if d := mustDist(t, "exp(0..10000)"); math.Abs(d.scale-10000/(0.5*math.Log(10000))) > 1e-9 {
		t.Errorf("exp(0..10000) mean %v", d.scale)
	}
	// qextreme: quantas bands of equal probability, uniform within each.
	q := mustDist(t, "qextreme(1..1000,2,4)")
	bounds := q.quanta
	if len(bounds) != 5 || bounds[0] != 1 || bounds[4] != 1001 {
		t.Fatalf("qextreme bands %v", bounds)
	}
	for i, v := range quantiles(q, 4000) {
		if band := i / 1000; v < bounds[band] || v >= bounds[band+1] {
			t.Fatalf("qextreme draw %d at quantile %d is outside band %d..%d", v, i, bounds[band], bounds[band+1])
		}
	}
	// doubles are the real draw, clamped but not truncated
	if d := mustDist(t, "uniform(1..10)"); d.double(0.5) != 6 || d.double(0.99) != 10 {
		t.Errorf("uniform(1..10) doubles %v %v", d.double(0.5), d.double(0.99))
	}
}

// Ratios: the real draw over the divisor, clamped to [0, 1].
func TestStressRatios(t *testing.T) {
	for _, c := range []struct {
		spec     string
		u, want  float64
		min, max float64
	}{
		{"fixed(1)/1000", 0.3, 0.001, 0.001, 0.001},
		{"fixed(1)/1", 0.3, 1, 1, 1},
		{"uniform(1..10)/10", 0, 0.1, 0.1, 1},
		{"uniform(1..10)/10", 0.5, 0.6, 0.1, 1},
		{"fixed(5)/2", 0.5, 1, 1, 1},
		{"uniform(1..10)/1K", 0.5, 0.006, 0.001, 0.01},
	} {
		r, err := parseStressRatio(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if got := r.sample(c.u); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s at %v: %v, want %v", c.spec, c.u, got, c.want)
		}
		if got := r.maxValue(); math.Abs(got-c.max) > 1e-12 {
			t.Errorf("%s: max %v, want %v", c.spec, got, c.max)
		}
	}
}

func TestStressDistErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"uniform(10..1)":            "min 10 is above max 1",
		"uniform(1)":                "expected min..max",
		"zipf(1..2)":                `unknown distribution "zipf"`,
		"fixed(x)":                  "not an integer",
		"fixed(1,2)":                "fixed takes 1 argument(s), found 2",
		"gaussian(1..10,0)":         "standard deviation must be > 0",
		"extreme(1..10)":            "extreme takes 2 argument(s)",
		"extreme(1..10,-1)":         "shape must be > 0",
		"qextreme(1..9,2,0)":        "quantas",
		"seq(3..3)":                 "seq needs min < max",
		"7":                         "expected name(args)",
		"fixed(99999999999999999b)": "overflows",
	} {
		_, err := parseStressDist(spec)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), spec) {
			t.Errorf("%s: error %v, want one naming it and saying %q", spec, err, want)
		}
	}
	for _, spec := range []string{"fixed(1)", "fixed(1)/0", "bogus(1)/10", "fixed(1)/x"} {
		if _, err := parseStressRatio(spec); err == nil {
			t.Errorf("ratio %s accepted", spec)
		}
	}
}

func FuzzParseStressDist(f *testing.F) {
	for _, s := range []string{"fixed(1)", "uniform(1..10)", "~exp(1..1M)", "gaussian(1..100,2)", "normal(1..9,3,1)",
		"extreme(1..1000,1.5)", "qextreme(1..1B,2,7)", "seq(1..4)", "uniform(1..10)/10"} {
		f.Add(s, 0.5)
	}
	f.Fuzz(func(t *testing.T, s string, u float64) {
		if !(u >= 0 && u < 1) {
			u = 0.5
		}
		if r, err := parseStressRatio(s); err == nil {
			if v := r.sample(u); !(v >= 0 && v <= 1) {
				t.Fatalf("%s: ratio %v", s, v)
			}
		}
		d, err := parseStressDist(s)
		if err != nil {
			return
		}
		lo, hi := d.minValue(), d.maxValue()
		if v := d.long(u); v < lo || v > hi {
			t.Fatalf("%s at %v: %d outside %d..%d", s, u, v, lo, hi)
		}
		// A real draw is clamped to the distribution's bounds, not to the
		// integer draws' extremes: a narrow gaussian (norm(0..1,10))
		// truncates to 0 at both ends of u yet draws 0.5 as a real.
		if v := d.double(u); v != v || v < float64(d.min) || v > float64(d.max) {
			t.Fatalf("%s at %v: double %v outside %d..%d", s, u, v, d.min, d.max)
		}
	})
}
