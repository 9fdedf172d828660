package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dist is a distribution of non-negative integers written as a string in a
// profile: "7" or "fixed(7)", "uniform(1,100)", "zipf(1000,1.2)" (power law
// over 1..1000 with exponent 1.2), "exp(10)" (exponential with mean 10),
// "normal(50,10)" (mean, standard deviation; clamped at 0).
//
// Sampling is by inverse transform of one uniform number, so a value can be
// derived deterministically from a hash (rows of partition p) as well as
// from the generator's random stream.
type Dist struct {
	Kind string // fixed, uniform, zipf, exp, normal
	A, B float64
}

// Fixed returns the distribution that always yields n.
func Fixed(n int64) Dist { return Dist{Kind: "fixed", A: float64(n)} }

// distLimit bounds every distribution argument.
const distLimit = 1 << 40

// ParseDist parses the string form of a distribution.
func ParseDist(s string) (Dist, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Dist{}, fmt.Errorf("empty distribution")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		// The same bounds as kind(args) below: sizes and counts past 2^40
		// are typos, and would overflow the generators' arithmetic.
		if n < 0 || n > distLimit {
			return Dist{}, fmt.Errorf("distribution %q: value must be between 0 and 2^40", s)
		}
		return Fixed(n), nil
	}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return Dist{}, fmt.Errorf("distribution %q: expected a number or kind(args), e.g. uniform(1,100)", s)
	}
	kind := strings.ToLower(strings.TrimSpace(s[:open]))
	var args []float64
	for _, a := range strings.Split(s[open+1:len(s)-1], ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(a), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Dist{}, fmt.Errorf("distribution %q: argument %q is not a finite number", s, strings.TrimSpace(a))
		}
		args = append(args, v)
	}
	want := map[string]int{"fixed": 1, "uniform": 2, "zipf": 2, "exp": 1, "normal": 2}
	n, ok := want[kind]
	if !ok {
		return Dist{}, fmt.Errorf("distribution %q: unknown kind %q (want fixed, uniform, zipf, exp or normal)", s, kind)
	}
	if len(args) != n {
		return Dist{}, fmt.Errorf("distribution %q: %s takes %d argument(s), got %d", s, kind, n, len(args))
	}
	d := Dist{Kind: kind, A: args[0]}
	if n == 2 {
		d.B = args[1]
	}
	const limit = distLimit
	switch {
	case d.A < 0 || d.B < 0:
		return Dist{}, fmt.Errorf("distribution %q: arguments must be >= 0", s)
	case d.A > limit || d.B > limit:
		return Dist{}, fmt.Errorf("distribution %q: arguments must be <= %d", s, int64(limit))
	case kind == "uniform" && d.B < d.A:
		return Dist{}, fmt.Errorf("distribution %q: uniform(min,max) needs min <= max", s)
	case kind == "zipf" && (d.A < 1 || d.B <= 0):
		return Dist{}, fmt.Errorf("distribution %q: zipf(max,s) needs max >= 1 and s > 0", s)
	}
	return d, nil
}

// String renders the distribution in the form ParseDist reads.
func (d Dist) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch d.Kind {
	case "uniform", "zipf", "normal":
		return d.Kind + "(" + f(d.A) + "," + f(d.B) + ")"
	case "":
		return "fixed(0)"
	}
	return d.Kind + "(" + f(d.A) + ")"
}

// Sample maps u in [0,1) to a value of the distribution.
func (d Dist) Sample(u float64) int64 {
	var x float64
	switch d.Kind {
	case "fixed", "":
		return int64(d.A)
	case "uniform":
		lo, hi := math.Floor(d.A), math.Floor(d.B)
		x = lo + math.Floor(u*(hi-lo+1))
		if x > hi {
			x = hi
		}
	case "zipf":
		// Continuous power law on [1, max+1), floored: P(k) ~ k^-s.
		n, s := d.A, d.B
		if math.Abs(s-1) < 1e-9 {
			x = math.Floor(math.Pow(n+1, u))
		} else {
			e := 1 - s
			x = math.Floor(math.Pow(u*(math.Pow(n+1, e)-1)+1, 1/e))
		}
		x = math.Min(math.Max(x, 1), n)
	case "exp":
		x = math.Floor(-d.A * math.Log(1-u))
	case "normal":
		x = math.Round(d.A + d.B*math.Sqrt2*math.Erfinv(2*u-1))
	}
	if x < 0 || math.IsNaN(x) {
		return 0
	}
	if x > 1<<40 {
		return 1 << 40
	}
	return int64(x)
}

// Mean is the distribution's expected value (approximate for zipf).
func (d Dist) Mean() float64 {
	switch d.Kind {
	case "uniform":
		return (math.Floor(d.A) + math.Floor(d.B)) / 2
	case "exp", "normal", "fixed", "":
		return d.A
	}
	// zipf: average of 64 quantiles is close enough for sizing hints.
	var sum float64
	for i := 0; i < 64; i++ {
		sum += float64(d.Sample((float64(i) + 0.5) / 64))
	}
	return sum / 64
}
