// Sine, cosine and arctangent from IEEE +, -, *, / only (support/
// PortableMath.cpp, built without FMA contraction): the same bits on every
// machine. libm's results may differ in the last bit between versions and
// between the FMA and non-FMA code paths a library picks at run time, and
// body geometry (part rotations, fitted frames) must be the same everywhere
// for a seed to give the same run (docs/evolution.md, "Determinism").
#pragma once

namespace evoc {

/// sin x and cos x, within about one ulp of the true values for |x| < 1e8.
/// Beyond it x is first reduced modulo the double nearest 2 pi (fmod, exact):
/// still the same bits everywhere, but off by about |x| * 2.4e-16 / 2 pi.
/// sin 0 = 0, cos 0 = 1, sin(pi/2) = 1 and cos(pi) = -1 exactly (for the
/// doubles nearest pi/2 and pi).
void portableSinCos(double x, double &s, double &c);
double portableSin(double x);
double portableCos(double x);

/// atan2(y, x) in [-pi, pi], within about one ulp; the signs and zeros of
/// the arguments are handled as C's atan2 does (NaN propagates).
double portableAtan2(double y, double x);

} // namespace evoc
