package embed

import "math"

// erf32 is a float32 rational approximation of erf on [-4, 4] (the
// minimax form used by Eigen and XLA for float erf); |error| < 2e-7.
func erf32(x float32) float32 {
	if x > 4 {
		x = 4
	} else if x < -4 {
		x = -4
	}
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	p = x * p
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return p / q
}

// gelu applies x*0.5*(1+erf(x/sqrt2)) in place (BERT's exact GELU).
func gelu(v []float32) {
	for i, x := range v {
		v[i] = 0.5 * x * (1 + erf32(x*(1/math.Sqrt2)))
	}
}

// exp32 is exp for float32 arguments by range reduction
// (x = k ln2 + r, |r| <= ln2/2) and a degree-6 polynomial; relative error ~1e-7.
func exp32(x float32) float32 {
	if x < -87 {
		return 0
	}
	if x > 88 {
		return float32(math.Inf(1))
	}
	k := float32(math.Floor(float64(x*1.4426950408889634 + 0.5)))
	r := x - k*0.693145751953125 - k*1.428606765330187e-06
	p := float32(1.0/720)*r + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return math.Float32frombits(math.Float32bits(p) + uint32(int32(k))<<23)
}
