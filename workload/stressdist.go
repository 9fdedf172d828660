package workload

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// stressDist is a distribution in cassandra-stress's spelling
// (tools/stress/.../settings/OptionDistribution.java): "[~]name(args)" with
// integer ranges written "min..max" and k, m, b suffixes (thousand,
// million, billion). Names: fixed(n), uniform(min..max),
// gaussian(min..max[,stdvrng]) or gaussian(min..max,mean,stdev) (also gauss,
// normal, norm), exp(min..max), extreme(min..max,shape) (also extr,
// weibull), qextreme(min..max,shape,quantas) (also qextr), seq(min..max).
// A leading ~ inverts it: min..max maps to max..min.
//
// cassandra-stress draws from Apache Commons Math distributions seeded per
// column and partition; here every draw is the inverse of the same
// cumulative distribution at a uniform number derived from a hash, so a
// value is a function of what it is drawn for. The shapes (clamping, the
// exponential's mean and the Weibull scale derived from the range, the
// quantized Weibull's equal-probability bands) are stress's.
type stressDist struct {
	kind        string // fixed, uniform, gaussian, exp, extreme, qextreme, seq
	min, max    int64
	mean, stdev float64 // gaussian
	shape       float64 // extreme, qextreme
	scale       float64 // extreme, qextreme; the mean of exp
	quanta      []int64 // qextreme: quanta+1 band bounds
	inverted    bool
	spec        string
}

var (
	stressDistRE  = regexp.MustCompile(`(?i)^(~?)([a-z]+)\((.+)\)$`)
	stressRatioRE = regexp.MustCompile(`(?i)^(.*)/([0-9]+[kmb]?)$`)
	stressRangeRE = regexp.MustCompile(`\.\.+`)
)

// parseStressLong reads an integer with an optional k, m or b suffix.
func parseStressLong(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'b':
			mult = 1_000_000_000
		case 'm':
			mult = 1_000_000
		case 'k':
			mult = 1_000
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	if n > math.MaxInt64/mult || n < math.MinInt64/mult {
		return 0, fmt.Errorf("%q overflows 64 bits", s)
	}
	return n * mult, nil
}

// stressBound keeps every range's arithmetic (max-min, max+1, the
// inversion) inside 64 bits; stress's own numbers are far smaller (100B).
const stressBound = 1 << 61

func checkStressBound(lo, hi int64) error {
	if lo < -stressBound || hi > stressBound {
		return fmt.Errorf("bounds must be within ±%d", int64(stressBound))
	}
	return nil
}

// parseStressDist parses one distribution.
func parseStressDist(spec string) (stressDist, error) {
	spec = strings.TrimSpace(spec)
	m := stressDistRE.FindStringSubmatch(spec)
	if m == nil {
		return stressDist{}, fmt.Errorf("distribution %q: expected name(args), e.g. uniform(1..10) or fixed(5)", spec)
	}
	d := stressDist{inverted: m[1] == "~", spec: spec}
	var params []string
	for _, p := range strings.Split(m[3], ",") {
		if p != "" {
			params = append(params, p)
		}
	}
	bad := func(format string, args ...any) (stressDist, error) {
		return stressDist{}, fmt.Errorf("distribution %q: "+format, append([]any{spec}, args...)...)
	}
	rng := func() error {
		b := stressRangeRE.Split(params[0], -1)
		if len(b) < 2 {
			return fmt.Errorf("expected min..max, found %q", params[0])
		}
		var err error
		if d.min, err = parseStressLong(b[0]); err != nil {
			return err
		}
		if d.max, err = parseStressLong(b[1]); err != nil {
			return err
		}
		if d.min > d.max {
			return fmt.Errorf("min %d is above max %d", d.min, d.max)
		}
		return checkStressBound(d.min, d.max)
	}
	float := func(s, what string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s %q is not a finite number", what, strings.TrimSpace(s))
		}
		return v, nil
	}
	nparams := func(lo, hi int) error {
		if len(params) < lo || len(params) > hi {
			if lo == hi {
				return fmt.Errorf("%s takes %d argument(s), found %d", strings.ToLower(m[2]), lo, len(params))
			}
			return fmt.Errorf("%s takes %d to %d arguments, found %d", strings.ToLower(m[2]), lo, hi, len(params))
		}
		return nil
	}
	switch name := strings.ToLower(m[2]); name {
	case "fixed":
		if err := nparams(1, 1); err != nil {
			return bad("%v", err)
		}
		n, err := parseStressLong(params[0])
		if err != nil {
			return bad("%v", err)
		}
		if err := checkStressBound(n, n); err != nil {
			return bad("%v", err)
		}
		d.kind, d.min, d.max = "fixed", n, n
	case "uniform", "seq":
		if err := nparams(1, 1); err != nil {
			return bad("%v", err)
		}
		if err := rng(); err != nil {
			return bad("%v", err)
		}
		d.kind = name
		if name == "seq" && d.min == d.max {
			return bad("seq needs min < max")
		}
	case "gaussian", "gauss", "normal", "norm":
		if err := nparams(1, 3); err != nil {
			return bad("%v", err)
		}
		if err := rng(); err != nil {
			return bad("%v", err)
		}
		d.kind = "gaussian"
		var err error
		if len(params) == 3 {
			if d.mean, err = float(params[1], "mean"); err != nil {
				return bad("%v", err)
			}
			if d.stdev, err = float(params[2], "stdev"); err != nil {
				return bad("%v", err)
			}
		} else {
			edge := 3.0
			if len(params) == 2 {
				if edge, err = float(params[1], "stdvrng"); err != nil {
					return bad("%v", err)
				}
			}
			d.mean = (float64(d.min) + float64(d.max)) / 2
			d.stdev = (float64(d.max) - float64(d.min)) / 2 / edge
		}
		if d.min != d.max && !(d.stdev > 0 && d.stdev < math.Inf(1)) {
			return bad("the standard deviation must be > 0 and finite")
		}
	case "exp":
		if err := nparams(1, 1); err != nil {
			return bad("%v", err)
		}
		if err := rng(); err != nil {
			return bad("%v", err)
		}
		d.kind = "exp"
		// The mean puts the quantile 1 - sqrt(1/(max-min)) of a unit
		// exponential at the top of the range.
		delta := float64(d.max) - float64(d.min)
		d.scale = delta / (0.5 * math.Log(delta))
	case "extreme", "extr", "weibull", "qextreme", "qextr":
		quantized := name == "qextreme" || name == "qextr"
		want := 2
		if quantized {
			want = 3
		}
		if err := nparams(want, want); err != nil {
			return bad("%v", err)
		}
		if err := rng(); err != nil {
			return bad("%v", err)
		}
		var err error
		if d.shape, err = float(params[1], "shape"); err != nil {
			return bad("%v", err)
		}
		if !(d.shape > 0) {
			return bad("the shape must be > 0")
		}
		d.kind = "extreme"
		// As for exp: the scale puts the Weibull's quantile
		// 1 - sqrt(1/(max-min)) at the top of the range.
		delta := float64(d.max) - float64(d.min)
		d.scale = delta / math.Pow(0.5*math.Log(delta), 1/d.shape)
		if quantized {
			q, err := strconv.Atoi(strings.TrimSpace(params[2]))
			if err != nil || q < 1 || q > 1<<16 {
				return bad("quantas %q: want an integer within 1..65536", strings.TrimSpace(params[2]))
			}
			if d.min != d.max {
				d.quanta = make([]int64, q+1)
				d.quanta[0], d.quanta[q] = d.min, d.max+1
				for i := 1; i < q; i++ {
					d.quanta[i] = d.rawLong(float64(i) / float64(q))
				}
				d.kind = "qextreme"
			}
		}
	default:
		return bad("unknown distribution %q (want fixed, uniform, gaussian, exp, extreme, qextreme or seq, or an alias: gauss, normal, norm, extr, weibull, qextr)", m[2])
	}
	if d.min == d.max {
		// stress turns every range of one value into fixed(min).
		d.kind = "fixed"
	}
	return d, nil
}

// rawLong is the distribution's inverse CDF at u, before inversion.
func (d *stressDist) rawLong(u float64) int64 {
	switch d.kind {
	case "fixed":
		return d.min
	case "uniform", "gaussian":
		return boundLong(d.min, d.max, d.rawReal(u))
	case "seq":
		return d.min + min(int64(u*(float64(d.max)-float64(d.min)+1)), d.max-d.min)
	case "exp", "extreme":
		r := d.rawReal(u)
		delta := d.max - d.min
		switch {
		case !(r > 0): // NaN too
			return d.min
		case r >= float64(delta):
			return d.max
		}
		return d.min + int64(r)
	case "qextreme":
		n := len(d.quanta) - 1
		q := min(max(int(u*float64(n)), 0), n-1)
		frac := u*float64(n) - float64(q)
		lo, hi := d.quanta[q], d.quanta[q+1]
		return min(lo+int64(frac*float64(hi-lo)), d.max)
	}
	return d.min
}

// rawReal is the underlying real distribution's inverse CDF at u (uniform
// over [min, max+1), gaussian, or the exponential or Weibull offset from
// min).
func (d *stressDist) rawReal(u float64) float64 {
	switch d.kind {
	case "uniform":
		return float64(d.min) + u*(float64(d.max)+1-float64(d.min))
	case "gaussian":
		return d.mean + d.stdev*math.Sqrt2*math.Erfinv(2*u-1)
	case "exp":
		return -d.scale * math.Log1p(-u)
	case "extreme", "qextreme":
		return d.scale * math.Pow(-math.Log1p(-u), 1/d.shape)
	}
	return float64(d.rawLong(u))
}

// boundLong truncates a real draw and clamps it to [min, max], as stress's
// bounded distributions do.
func boundLong(lo, hi int64, v float64) int64 {
	switch {
	case v != v || v <= float64(lo):
		return lo
	case v >= float64(hi):
		return hi
	}
	return min(max(int64(v), lo), hi)
}

// long draws an integer for u in [0, 1).
func (d *stressDist) long(u float64) int64 {
	v := d.rawLong(u)
	if d.inverted {
		return d.max - (v - d.min)
	}
	return v
}

// double draws a real for u in [0, 1): stress's nextDouble, used for
// double and float columns and for ratios. It is clamped to [min, max]
// like the integer draw, but not truncated.
func (d *stressDist) double(u float64) float64 {
	var v float64
	switch d.kind {
	case "uniform", "gaussian":
		v = math.Min(math.Max(d.rawReal(u), float64(d.min)), float64(d.max))
		if v != v {
			v = float64(d.min)
		}
	case "exp", "extreme":
		r := d.rawReal(u)
		if !(r > 0) {
			r = 0
		}
		v = float64(d.min) + math.Min(r, float64(d.max)-float64(d.min))
	default:
		v = float64(d.rawLong(u))
	}
	if d.inverted {
		return float64(d.max) - (v - float64(d.min))
	}
	return v
}

// minValue and maxValue are the distribution's bounds.
func (d *stressDist) minValue() int64 { return min(d.long(0), d.long(math.Nextafter(1, 0))) }
func (d *stressDist) maxValue() int64 { return max(d.long(0), d.long(math.Nextafter(1, 0))) }

func (d *stressDist) String() string { return d.spec }

// stressRatio is a ratio distribution, "dist/divisor"
// (settings/OptionRatioDistribution.java): a real draw divided by the
// divisor, clamped to [0, 1].
type stressRatio struct {
	dist    stressDist
	divisor float64
	spec    string
}

func parseStressRatio(spec string) (stressRatio, error) {
	spec = strings.TrimSpace(spec)
	m := stressRatioRE.FindStringSubmatch(spec)
	if m == nil {
		return stressRatio{}, fmt.Errorf("ratio %q: expected distribution/divisor, e.g. uniform(1..10)/10 or fixed(1)/1", spec)
	}
	div, err := parseStressLong(m[2])
	if err != nil || div <= 0 {
		return stressRatio{}, fmt.Errorf("ratio %q: the divisor must be a positive integer", spec)
	}
	d, err := parseStressDist(m[1])
	if err != nil {
		return stressRatio{}, fmt.Errorf("ratio %q: %w", spec, err)
	}
	return stressRatio{dist: d, divisor: float64(div), spec: spec}, nil
}

func (r *stressRatio) sample(u float64) float64 {
	v := r.dist.double(u) / r.divisor
	if !(v > 0) {
		return 0
	}
	return math.Min(v, 1)
}

// maxValue is the largest ratio the distribution yields.
func (r *stressRatio) maxValue() float64 {
	return math.Min(math.Max(r.sample(0), r.sample(math.Nextafter(1, 0))), 1)
}

func (r *stressRatio) String() string { return r.spec }
