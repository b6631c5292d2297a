/* Gaussian helpers of the core (internal): the standard normal density, distribution and
 * quantile, erf/erfc and the scaled erfcx, and TrueSkill's truncated-Gaussian corrections v and w
 * for a win and for a draw, and P(A wins) and match quality of two teams of Gaussian skills.
 * Shared by the Gaussian models (TrueSkill, Weng-Lin, through gaussian.h) and the whole-history
 * refit. The two-team formulas stay beside Φ so that it inlines into them (one call less on
 * every round's P(A)).
 *
 * Deterministic: only + - * /, IEEE sqrt, fabs and eo__exp (numeric.h) are used, never libm's
 * exp or erfc, so the results are the same bits with every C library. How each function is
 * computed and its measured accuracy are in gauss.c and docs/MODELS.md ("TrueSkill", "Numerics").
 *
 * Conventions: NaN in gives NaN out. Finite arguments never give NaN; the only infinities are
 * true values beyond the double range (erfcx(x) for x < -26.6, eo__gauss_ppf(0) and (1)). */
#ifndef EO_GAUSS_H
#define EO_GAUSS_H

/* φ(x) = exp(-x²/2) / √(2π). */
double eo__gauss_pdf(double x);

/* Φ(x) = P(Z <= x) for a standard normal Z. Exactly symmetric: Φ(-x) is computed as the tail
 * q and Φ(x) as 1 - q, so Φ(x) + Φ(-x) == 1 up to the one rounding of 1 - q. Relative error a few
 * ulp for x <= 0 (down to the subnormal range near x = -38.4). */
double eo__gauss_cdf(double x);

/* Φ⁻¹(p) for p in [0, 1]: -inf at 0, +inf at 1, NaN outside. Bisection on Φ then Newton
 * polishing; meant for set-up work (about 100 evaluations of Φ), not for hot paths. */
double eo__gauss_ppf(double p);

/* erf, erfc and erfcx(x) = exp(x²)·erfc(x). erfcx(x) overflows to +inf for x < -26.6. */
double eo__erf(double x);
double eo__erfc(double x);
double eo__erfcx(double x);

/* TrueSkill's corrections for a performance difference d ~ N(t, 1) (in units of c) and a draw
 * margin eps >= 0 (same units), as in Herbrich, Minka & Graepel (2006):
 *   win  (d > eps):        v = φ(t-eps) / Φ(t-eps),      w = v·(v + t - eps)
 *   draw (|d| <= eps):     v = (φ(-eps-t) - φ(eps-t)) / (Φ(eps-t) - Φ(-eps-t)),
 *                          w = v² + ((eps-t)·φ(eps-t) + (eps+t)·φ(eps+t)) / (Φ(eps-t) - Φ(-eps-t))
 * v is the mean and 1 - w the variance of a standard normal truncated to the observed region
 * (shifted by -t), so w is in [0, 1] (returned clamped to it). Robust for any finite t and
 * eps: the scaled forms (erfcx, Mills ratios, an asymptotic series beyond |t - eps| = 22.6)
 * avoid overflow and 0/0 where the plain formulas give NaN or infinity (t - eps < -38 and
 * further). The draw versions are exactly odd (v) and even (w) in t. A negative eps is read
 * as 0. */
void eo__gauss_vw_win(double t, double eps, double *v, double *w);
void eo__gauss_vw_draw(double t, double eps, double *v, double *w);

/* Each value alone (the same numbers as the pairs above). */
double eo__gauss_v_win(double t, double eps);
double eo__gauss_w_win(double t, double eps);
double eo__gauss_v_draw(double t, double eps);
double eo__gauss_w_draw(double t, double eps);

/* Two teams of Gaussian skills, from each team's aggregates (Σ w·μ, Σ w²σ², Σ w²), β² the
 * performance variance of one player at weight 1, and a field offset in A's favour (μ units).
 * With d = (μA − μB) + field and D = (varA + varB) + β²(w2A + w2B):
 *   eo__gauss_team_p:       P(A wins) = Φ(d / √D); 0.5 when D is 0 (nobody's skill at stake);
 *   eo__gauss_team_quality: TrueSkill's two-team match quality √(β²(w2A + w2B) / D)·exp(−d²/2D);
 *                           1 when D is 0.
 * Swapping the teams and negating field negates d exactly, so P becomes 1 − P bit for bit. */
double eo__gauss_team_p(double beta2, double mu_a, double var_a, double w2_a, double mu_b,
                        double var_b, double w2_b, double field);
double eo__gauss_team_quality(double beta2, double mu_a, double var_a, double w2_a, double mu_b,
                              double var_b, double w2_b, double field);

#endif
