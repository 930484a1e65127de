//! Formulas that render themselves: one expression value that evaluates to the number the
//! code uses and prints both lines of a [`Derivation`](crate::base::derivation::Derivation),
//! the symbolic formula and the formula with values substituted, so the three cannot drift.
//!
//! A leaf is a symbol ([`Expr::sym`]: `L` in the formula, `32` in the values, 32 in the
//! arithmetic) or a literal ([`Expr::int`]: `2` in both). Operators print with the spacing
//! and signs the derivations use (`a × b`, `a / b`, `a + b`, `a − b`, `min(a, b)`, `⌈a⌉`,
//! `⌊a⌋`) and put parentheses where precedence needs them. Two nodes render differently on
//! the two lines: [`Expr::Sum`] (a formula for one term, the values of every term summed, as
//! a per-layer-group sum prints) and [`Expr::Zero`] (no terms at all: `0 (why)`); a few more
//! keep a formula's own typography: [`Expr::Dot`] (`2·M·N·K`, values with `×`),
//! [`Expr::Paren`] (parentheses precedence does not need), [`Expr::Approx`] (`M ≈ …`),
//! [`Expr::Series`] (`Σ_(ℓ = 1…L) …`, the bound substituted) and [`Expr::Computed`] (a
//! sub-formula whose value the code computes elsewhere).
//!
//! Evaluation is exact where the code counts ([`Expr::exact`]: checked `u64` fractions, the
//! overflow named by a translation key, as [`crate::base::checked`] does) and `f64` where it
//! measures ([`Expr::eval`]).
//!
//! ```
//! use llmcalc_core::base::expr::Expr;
//! // 2 × L × H_kv × d_head × b for 32 layers, 8 KV heads of 128, 2 bytes.
//! let e = Expr::mul([
//!     Expr::int(2),
//!     Expr::sym("L", "32", 32),
//!     Expr::sym("H_kv", "8", 8),
//!     Expr::sym("d_head", "128", 128),
//!     Expr::sym("b", "2", 2),
//! ]);
//! assert_eq!(e.formula(), "2 × L × H_kv × d_head × b");
//! assert_eq!(e.values(), "2 × 32 × 8 × 128 × 2");
//! assert_eq!(e.exact("ovf_kv_bytes").map(|v| v.ceil()).ok(), Some(131_072));
//! assert_eq!(e.eval(), 131_072.0);
//! ```

use crate::base::error::{CalcError, Phrase};
use crate::base::units::fmt_sig;

/// A leaf's value: an exact non-negative fraction `num / den` (counts, bytes, bits / 8), or
/// a measured real number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `num / den`, kept unreduced (a product's overflow is the code's overflow).
    Exact(u64, u64),
    /// A real number (FLOP/s, seconds, bytes per second).
    Real(f64),
}

impl Value {
    /// The value in `f64`.
    fn real(self) -> f64 {
        match self {
            Value::Exact(n, d) => n as f64 / d as f64,
            Value::Real(x) => x,
        }
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Exact(n, 1)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Real(x)
    }
}

/// An exact non-negative fraction, the result of [`Expr::exact`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// Numerator.
    pub num: u64,
    /// Denominator (never 0).
    pub den: u64,
}

impl Ratio {
    /// Rounded up to an integer (`⌈num / den⌉`).
    pub fn ceil(self) -> u64 {
        self.num.div_ceil(self.den)
    }

    /// Rounded down to an integer (`⌊num / den⌋`).
    pub fn floor(self) -> u64 {
        self.num / self.den
    }
}

/// A formula: evaluates, and prints itself with symbols or with values.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A quantity: `symbol` in the formula, `shown` (already formatted) in the values.
    Sym {
        /// The symbol (`L`, `H_kv`, `(4 − b)`).
        symbol: String,
        /// The value as the values line shows it (`32`, `0.5`, `989 × 10^12 FLOP/s`).
        shown: String,
        /// The value the arithmetic uses.
        value: Value,
    },
    /// A literal number, the same on both lines.
    Num(u64),
    /// `a + b + …`
    Add(Vec<Expr>),
    /// `a − b`
    Sub(Box<Expr>, Box<Expr>),
    /// `a × b × …`
    Mul(Vec<Expr>),
    /// `a / b`
    Div(Box<Expr>, Box<Expr>),
    /// `min(a, b, …)`
    Min(Vec<Expr>),
    /// `max(a, b, …)`
    Max(Vec<Expr>),
    /// `⌈a⌉`
    Ceil(Box<Expr>),
    /// `⌊a⌋`
    Floor(Box<Expr>),
    /// `lhs = a` in the formula, `a` in the values.
    Named(String, Box<Expr>),
    /// `lhs ≈ a` in the formula (a rule of thumb, not an identity), `a` in the values.
    Approx(String, Box<Expr>),
    /// `a·b·…` in the formula (a product written compactly, as a textbook does), `a × b × …`
    /// in the values; it evaluates as [`Expr::Mul`].
    Dot(Vec<Expr>),
    /// `(a)` on both lines, where precedence alone would print no parentheses (a grouping the
    /// formula shows for the reader: `(HBM × e_bw) / (BW_link × e_link)`).
    Paren(Box<Expr>),
    /// A sum over an index whose terms the formula names but does not list:
    /// `Σ_(var = 1…count) body` on both lines, `count` substituted in the values
    /// (`Σ_(ℓ = 1…32) (K_ℓ + V_ℓ)`); like [`Expr::Call`], it has no value.
    Series {
        /// The index (`ℓ`).
        var: String,
        /// The upper bound (`L`).
        count: Box<Expr>,
        /// One term, printed in symbols on both lines.
        body: Box<Expr>,
    },
    /// A sub-expression the values line shows by its result: `(P − P_q)` in the formula,
    /// `shown` (`1,024`) in the values; it evaluates as `expr`.
    Shown {
        /// The sub-expression.
        expr: Box<Expr>,
        /// Its result as the values line shows it.
        shown: String,
    },
    /// A sub-formula the code computes elsewhere: `expr` in the formula, `shown` in the values;
    /// it evaluates to `value` (the sub-formula's own leaves need no values).
    Computed {
        /// The sub-formula.
        expr: Box<Expr>,
        /// Its value as the values line shows it.
        shown: String,
        /// Its value.
        value: Value,
    },
    /// `expr`, the values line adding an aside in parentheses after it (`⌈…⌉ (× 2 = 8 GPU)`).
    Aside {
        /// The expression.
        expr: Box<Expr>,
        /// What the values line adds.
        aside: String,
    },
    /// A function the formula names but does not spell out (`Q(…)`, the quantized bytes of
    /// some elements): printed as `name(a, …)` on both lines; it has no value ([`Expr::eval`]
    /// gives NaN, [`Expr::exact`] an error).
    Call(String, Vec<Expr>),
    /// A sum over groups: the formula prints `pattern` (after `Σ_index ` when given), the
    /// values print every term, summed, in parentheses; it evaluates to the terms' sum.
    Sum {
        /// The index of the `Σ` in the formula (`layers`), `None` to print no `Σ`.
        index: Option<String>,
        /// One term in symbols.
        pattern: Box<Expr>,
        /// Every term, in values (their formulas are never printed).
        terms: Vec<Expr>,
    },
    /// Zero because nothing is there: the formula prints `formula`, the values `0 (because)`.
    Zero {
        /// What the formula would be.
        formula: Box<Expr>,
        /// Why it is zero (`L_attn = 0`).
        because: String,
    },
}

/// Binding strength when printed: sums, products and quotients, atoms.
const SUM: u8 = 1;
const PRODUCT: u8 = 2;
const ATOM: u8 = 3;

impl Expr {
    /// A symbol with its shown value and its value.
    pub fn sym(symbol: &str, shown: impl Into<String>, value: impl Into<Value>) -> Expr {
        Expr::Sym {
            symbol: symbol.into(),
            shown: shown.into(),
            value: value.into(),
        }
    }

    /// A literal integer.
    pub fn int(n: u64) -> Expr {
        Expr::Num(n)
    }

    /// `a × b × …`
    pub fn mul(xs: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::Mul(xs.into_iter().collect())
    }

    /// `a + b + …`
    pub fn add(xs: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::Add(xs.into_iter().collect())
    }

    /// `a − b`
    pub fn minus(a: Expr, b: Expr) -> Expr {
        Expr::Sub(Box::new(a), Box::new(b))
    }

    /// `a / b`
    pub fn over(a: Expr, b: Expr) -> Expr {
        Expr::Div(Box::new(a), Box::new(b))
    }

    /// `⌈a⌉`
    pub fn ceil(a: Expr) -> Expr {
        Expr::Ceil(Box::new(a))
    }

    /// `⌊a⌋`
    pub fn floor(a: Expr) -> Expr {
        Expr::Floor(Box::new(a))
    }

    /// `lhs = a` (the formula names what it computes; the values do not repeat it).
    pub fn named(lhs: &str, a: Expr) -> Expr {
        Expr::Named(lhs.into(), Box::new(a))
    }

    /// `lhs ≈ a`.
    pub fn approx(lhs: &str, a: Expr) -> Expr {
        Expr::Approx(lhs.into(), Box::new(a))
    }

    /// `a·b·…` in the formula, `a × b × …` in the values.
    pub fn dot(xs: impl IntoIterator<Item = Expr>) -> Expr {
        Expr::Dot(xs.into_iter().collect())
    }

    /// `(a)`, always.
    pub fn paren(a: Expr) -> Expr {
        Expr::Paren(Box::new(a))
    }

    /// `expr` in the formula, `shown` in the values, `value` in the arithmetic.
    pub fn computed(expr: Expr, shown: impl Into<String>, value: impl Into<Value>) -> Expr {
        Expr::Computed {
            expr: Box::new(expr),
            shown: shown.into(),
            value: value.into(),
        }
    }

    /// The bytes of one `bits`-bit element as the symbol `symbol` (`b`, `b_act`, `b_base`):
    /// shown as `bits / 8` to about four significant digits (`2`, `0.5`), followed by ` unit`
    /// when `unit` is not empty (`2 B`); its value the exact fraction `bits / 8`. The one
    /// home of a formula's bytes per element.
    pub fn element_bytes(symbol: &str, bits: u64, unit: &str) -> Expr {
        let b = fmt_sig(bits as f64 / 8.0);
        let shown = if unit.is_empty() {
            b
        } else {
            format!("{b} {unit}")
        };
        Expr::sym(symbol, shown, Value::Exact(bits, 8))
    }

    /// `expr` in the formula, `shown` in the values.
    pub fn shown(expr: Expr, shown: impl Into<String>) -> Expr {
        Expr::Shown {
            expr: Box::new(expr),
            shown: shown.into(),
        }
    }

    /// The symbolic formula: `2 × L × H_kv × d_head × b`.
    pub fn formula(&self) -> String {
        self.render(false)
    }

    /// The formula with values substituted: `2 × 32 × 8 × 128 × 2`.
    pub fn values(&self) -> String {
        self.render(true)
    }

    fn prec(&self, values: bool) -> u8 {
        match self {
            Expr::Add(_) | Expr::Sub(..) => SUM,
            Expr::Mul(_) | Expr::Div(..) | Expr::Dot(_) => PRODUCT,
            Expr::Named(..) | Expr::Approx(..) => 0,
            Expr::Series { .. } => PRODUCT,
            Expr::Computed { expr, .. } if !values => expr.prec(false),
            Expr::Sum { pattern, .. } if !values => pattern.prec(false),
            Expr::Zero { formula, .. } if !values => formula.prec(false),
            Expr::Zero { .. } => SUM,
            Expr::Shown { expr, .. } if !values => expr.prec(false),
            Expr::Aside { expr, .. } => expr.prec(values).min(SUM),
            _ => ATOM,
        }
    }

    /// `x` printed, in parentheses when it binds looser than `min`.
    fn child(x: &Expr, values: bool, min: u8) -> String {
        let s = x.render(values);
        if x.prec(values) < min {
            format!("({s})")
        } else {
            s
        }
    }

    fn list(xs: &[Expr], values: bool, sep: &str, min: u8) -> String {
        xs.iter()
            .map(|x| Expr::child(x, values, min))
            .collect::<Vec<_>>()
            .join(sep)
    }

    fn render(&self, values: bool) -> String {
        match self {
            Expr::Sym { symbol, shown, .. } => (if values { shown } else { symbol }).clone(),
            Expr::Num(n) => n.to_string(),
            Expr::Add(xs) => Expr::list(xs, values, " + ", SUM),
            Expr::Mul(xs) => Expr::list(xs, values, " × ", PRODUCT),
            Expr::Dot(xs) if values => Expr::list(xs, true, " × ", PRODUCT),
            Expr::Dot(xs) => Expr::list(xs, false, "·", PRODUCT),
            Expr::Paren(a) => format!("({})", a.render(values)),
            Expr::Series { var, count, body } => format!(
                "Σ_({var} = 1…{}) {}",
                count.render(values),
                Expr::child(body, false, PRODUCT)
            ),
            Expr::Computed { shown, .. } if values => shown.clone(),
            Expr::Computed { expr, .. } => expr.render(false),
            Expr::Sub(a, b) => format!(
                "{} − {}",
                Expr::child(a, values, SUM),
                Expr::child(b, values, PRODUCT)
            ),
            Expr::Div(a, b) => format!(
                "{} / {}",
                Expr::child(a, values, PRODUCT),
                Expr::child(b, values, ATOM)
            ),
            Expr::Min(xs) => format!("min({})", Expr::list(xs, values, ", ", 0)),
            Expr::Max(xs) => format!("max({})", Expr::list(xs, values, ", ", 0)),
            Expr::Ceil(a) => format!("⌈{}⌉", a.render(values)),
            Expr::Floor(a) => format!("⌊{}⌋", a.render(values)),
            Expr::Named(_, a) if values => a.render(true),
            Expr::Named(lhs, a) => format!("{lhs} = {}", a.render(false)),
            Expr::Approx(_, a) if values => a.render(true),
            Expr::Approx(lhs, a) => format!("{lhs} ≈ {}", a.render(false)),
            Expr::Sum { index, pattern, .. } if !values => match index {
                Some(i) => format!("Σ_{i} {}", pattern.render(false)),
                None => pattern.render(false),
            },
            Expr::Sum { terms, .. } => format!("({})", Expr::list(terms, true, " + ", SUM)),
            Expr::Zero { formula, .. } if !values => formula.render(false),
            Expr::Shown { shown, .. } if values => shown.clone(),
            Expr::Shown { expr, .. } => expr.render(false),
            Expr::Aside { expr, aside } if values => format!("{} ({aside})", expr.render(true)),
            Expr::Aside { expr, .. } => expr.render(false),
            Expr::Call(name, xs) => format!("{name}({})", Expr::list(xs, values, ", ", 0)),
            Expr::Zero { because, .. } => format!("0 ({because})"),
        }
    }

    /// The value in `f64` (exact leaves divided out).
    pub fn eval(&self) -> f64 {
        let all = |xs: &[Expr]| xs.iter().map(Expr::eval).collect::<Vec<_>>();
        match self {
            Expr::Sym { value, .. } | Expr::Computed { value, .. } => value.real(),
            Expr::Num(n) => *n as f64,
            Expr::Add(xs) => all(xs).iter().sum(),
            Expr::Mul(xs) | Expr::Dot(xs) => all(xs).iter().product(),
            Expr::Sub(a, b) => a.eval() - b.eval(),
            Expr::Div(a, b) => a.eval() / b.eval(),
            Expr::Min(xs) => all(xs).into_iter().fold(f64::INFINITY, f64::min),
            Expr::Max(xs) => all(xs).into_iter().fold(f64::NEG_INFINITY, f64::max),
            Expr::Ceil(a) => a.eval().ceil(),
            Expr::Floor(a) => a.eval().floor(),
            Expr::Named(_, a) | Expr::Approx(_, a) | Expr::Paren(a) => a.eval(),
            Expr::Sum { terms, .. } => all(terms).iter().sum(),
            Expr::Zero { .. } => 0.0,
            Expr::Shown { expr, .. } | Expr::Aside { expr, .. } => expr.eval(),
            Expr::Call(..) | Expr::Series { .. } => f64::NAN,
        }
    }

    /// The exact value, as the code's checked arithmetic computes it: products and sums of
    /// fractions, left to right, kept unreduced; `Overflow` naming `what` (a translation key)
    /// when a step does not fit in `u64`, a difference is negative, a divisor is zero or a
    /// leaf is a real number.
    pub fn exact(&self, what: &'static str) -> Result<Ratio, CalcError> {
        debug_assert!(crate::base::i18n::is_row(what), "no translation for {what}");
        let ovf = || CalcError::Overflow {
            what: Phrase::tr(what),
        };
        let fit = |x: u128| u64::try_from(x).map_err(|_| ovf());
        let mul = |a: Ratio, b: Ratio| -> Result<Ratio, CalcError> {
            Ok(Ratio {
                num: a.num.checked_mul(b.num).ok_or_else(ovf)?,
                den: a.den.checked_mul(b.den).ok_or_else(ovf)?,
            })
        };
        let add = |a: Ratio, b: Ratio| -> Result<Ratio, CalcError> {
            if a.den == b.den {
                return Ok(Ratio {
                    num: a.num.checked_add(b.num).ok_or_else(ovf)?,
                    den: a.den,
                });
            }
            let num = u128::from(a.num) * u128::from(b.den) + u128::from(b.num) * u128::from(a.den);
            Ok(Ratio {
                num: fit(num)?,
                den: fit(u128::from(a.den) * u128::from(b.den))?,
            })
        };
        // a < b, compared across denominators.
        let less = |a: Ratio, b: Ratio| {
            u128::from(a.num) * u128::from(b.den) < u128::from(b.num) * u128::from(a.den)
        };
        let int = |n: u64| Ratio { num: n, den: 1 };
        let fold =
            |xs: &[Expr], start: Ratio, f: &dyn Fn(Ratio, Ratio) -> Result<Ratio, CalcError>| {
                xs.iter().try_fold(start, |acc, x| f(acc, x.exact(what)?))
            };
        let pick = |xs: &[Expr], min: bool| -> Result<Ratio, CalcError> {
            let mut best: Option<Ratio> = None;
            for x in xs {
                let v = x.exact(what)?;
                best = match best {
                    Some(b) if less(b, v) == min => Some(b),
                    _ => Some(v),
                };
            }
            best.ok_or_else(ovf)
        };
        match self {
            Expr::Sym { value, .. } | Expr::Computed { value, .. } => match *value {
                Value::Exact(_, 0) | Value::Real(_) => Err(ovf()),
                Value::Exact(num, den) => Ok(Ratio { num, den }),
            },
            Expr::Num(n) => Ok(int(*n)),
            Expr::Add(xs) | Expr::Sum { terms: xs, .. } => fold(xs, int(0), &add),
            Expr::Mul(xs) | Expr::Dot(xs) => fold(xs, int(1), &mul),
            Expr::Sub(a, b) => {
                let (a, b) = (a.exact(what)?, b.exact(what)?);
                let l = u128::from(a.num) * u128::from(b.den);
                let r = u128::from(b.num) * u128::from(a.den);
                Ok(Ratio {
                    num: fit(l.checked_sub(r).ok_or_else(ovf)?)?,
                    den: fit(u128::from(a.den) * u128::from(b.den))?,
                })
            }
            Expr::Div(a, b) => {
                let (a, b) = (a.exact(what)?, b.exact(what)?);
                if b.num == 0 {
                    return Err(ovf());
                }
                mul(
                    a,
                    Ratio {
                        num: b.den,
                        den: b.num,
                    },
                )
            }
            Expr::Min(xs) => pick(xs, true),
            Expr::Max(xs) => pick(xs, false),
            Expr::Ceil(a) => Ok(int(a.exact(what)?.ceil())),
            Expr::Floor(a) => Ok(int(a.exact(what)?.floor())),
            Expr::Named(_, a) | Expr::Approx(_, a) | Expr::Paren(a) => a.exact(what),
            Expr::Zero { .. } => Ok(int(0)),
            Expr::Shown { expr, .. } | Expr::Aside { expr, .. } => expr.exact(what),
            Expr::Call(..) | Expr::Series { .. } => Err(ovf()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(symbol: &str, n: u64) -> Expr {
        Expr::sym(symbol, n.to_string(), n)
    }

    #[test]
    fn every_operator() {
        // N = max(⌈(a + b) × c / d⌉ − ⌊e / f⌋, min(g, h))
        let e = Expr::named(
            "N",
            Expr::Max(vec![
                Expr::minus(
                    Expr::ceil(Expr::over(
                        Expr::mul([Expr::add([s("a", 3), s("b", 4)]), s("c", 5)]),
                        s("d", 2),
                    )),
                    Expr::floor(Expr::over(s("e", 7), s("f", 2))),
                ),
                Expr::Min(vec![s("g", 20), s("h", 30)]),
            ]),
        );
        assert_eq!(
            e.formula(),
            "N = max(⌈(a + b) × c / d⌉ − ⌊e / f⌋, min(g, h))"
        );
        assert_eq!(e.values(), "max(⌈(3 + 4) × 5 / 2⌉ − ⌊7 / 2⌋, min(20, 30))");
        // ⌈17.5⌉ − ⌊3.5⌋ = 18 − 3 = 15 < 20.
        assert_eq!(e.exact("ovf_kv_bytes"), Ok(Ratio { num: 20, den: 1 }));
        assert_eq!(e.eval(), 20.0);
    }

    #[test]
    fn parentheses_by_precedence() {
        let e = Expr::over(
            Expr::mul([s("a", 6), s("b", 2)]),
            Expr::mul([s("c", 3), s("d", 2)]),
        );
        assert_eq!(e.formula(), "a × b / (c × d)");
        assert_eq!(e.eval(), 2.0);
        let e = Expr::minus(s("a", 9), Expr::minus(s("b", 5), s("c", 1)));
        assert_eq!(e.formula(), "a − (b − c)");
        assert_eq!(e.exact("ovf_kv_bytes").map(Ratio::floor), Ok(5));
    }

    #[test]
    fn sums_over_groups_and_zero() {
        let pattern = Expr::mul([
            Expr::int(2),
            Expr::sym("L", "", 0u64),
            Expr::sym("d", "", 0u64),
        ]);
        let sum = Expr::Sum {
            index: None,
            pattern: Box::new(pattern.clone()),
            terms: vec![
                Expr::mul([Expr::int(3), Expr::int(2), Expr::int(64)]),
                Expr::mul([Expr::int(1), Expr::int(2), Expr::int(128)]),
            ],
        };
        let e = Expr::mul([sum, Expr::sym("b", "0.5", Value::Exact(4, 8))]);
        assert_eq!(e.formula(), "2 × L × d × b");
        assert_eq!(e.values(), "(3 × 2 × 64 + 1 × 2 × 128) × 0.5");
        assert_eq!(e.exact("ovf_kv_bytes"), Ok(Ratio { num: 2560, den: 8 }));
        let indexed = Expr::Sum {
            index: Some("layers".into()),
            pattern: Box::new(Expr::mul([
                Expr::add([s("d_k", 1), s("d_v", 1)]),
                s("H", 1),
            ])),
            terms: vec![],
        };
        assert_eq!(
            Expr::mul([indexed, s("b", 2)]).formula(),
            "Σ_layers (d_k + d_v) × H × b"
        );
        let zero = Expr::Zero {
            formula: Box::new(Expr::mul([pattern, s("b", 2)])),
            because: "L_attn = 0".into(),
        };
        assert_eq!(zero.formula(), "2 × L × d × b");
        assert_eq!(zero.values(), "0 (L_attn = 0)");
        assert_eq!(zero.exact("ovf_kv_bytes").map(Ratio::ceil), Ok(0));
    }

    #[test]
    fn shown_and_calls() {
        let rest = Expr::shown(Expr::minus(s("P", 10), s("P_q", 4)), "6");
        let e = Expr::add([
            Expr::Call("Q".into(), vec![s("P_q", 4)]),
            Expr::mul([rest.clone(), s("b", 2)]),
        ]);
        assert_eq!(e.formula(), "Q(P_q) + (P − P_q) × b");
        assert_eq!(e.values(), "Q(4) + 6 × 2");
        assert!(e.eval().is_nan());
        let aside = Expr::Aside {
            expr: Box::new(Expr::ceil(s("N", 3))),
            aside: "× 2 = 6 GPU".into(),
        };
        assert_eq!(aside.formula(), "⌈N⌉");
        assert_eq!(aside.values(), "⌈3⌉ (× 2 = 6 GPU)");
        assert_eq!(
            Expr::mul([rest, s("b", 2)])
                .exact("ovf_kv_bytes")
                .map(Ratio::ceil),
            Ok(12)
        );
    }

    #[test]
    fn overflow_and_reals() {
        let e = Expr::mul([s("a", u64::MAX), Expr::int(2)]);
        assert!(matches!(
            e.exact("ovf_kv_bytes"),
            Err(CalcError::Overflow { .. })
        ));
        let r = Expr::named(
            "I*",
            Expr::over(
                Expr::sym("P", "1 TFLOP/s", 1e12),
                Expr::sym("β", "1 TB/s", 1e12),
            ),
        );
        assert_eq!(r.formula(), "I* = P / β");
        assert_eq!(r.values(), "1 TFLOP/s / 1 TB/s");
        assert_eq!(r.eval(), 1.0);
        assert!(r.exact("ovf_kv_bytes").is_err());
    }

    #[test]
    fn typography_of_textbook_formulas() {
        // I = 2·M·N·K / (b·(M·K + K·N + M·N)): `·` in the formula, `×` in the values.
        let (m, k, n) = (s("M", 4), s("K", 2), s("N", 8));
        let b = Expr::element_bytes("b", 16, "");
        let e = Expr::named(
            "I",
            Expr::over(
                Expr::dot([Expr::int(2), m.clone(), n.clone(), k.clone()]),
                Expr::dot([
                    b,
                    Expr::add([
                        Expr::dot([m.clone(), k.clone()]),
                        Expr::dot([k, n.clone()]),
                        Expr::dot([m, n]),
                    ]),
                ]),
            ),
        );
        assert_eq!(e.formula(), "I = 2·M·N·K / (b·(M·K + K·N + M·N))");
        assert_eq!(e.values(), "2 × 4 × 8 × 2 / (2 × (4 × 2 + 2 × 8 + 4 × 8))");
        // 128 / (2 × 56).
        assert_eq!(e.eval(), 128.0 / 112.0);
        assert_eq!(
            e.exact("ovf_kv_bytes"),
            Ok(Ratio {
                num: 1024,
                den: 896
            })
        );
        // Parentheses the reader is shown, and a rule of thumb.
        let ratio = Expr::over(
            Expr::paren(Expr::mul([s("HBM", 6), s("e_bw", 1)])),
            Expr::mul([s("BW", 2), s("e", 1)]),
        );
        assert_eq!(ratio.formula(), "(HBM × e_bw) / (BW × e)");
        assert_eq!(ratio.values(), "(6 × 1) / (2 × 1)");
        assert_eq!(ratio.eval(), 3.0);
        let rot = Expr::approx("M", Expr::mul([Expr::int(2), s("W", 5)]));
        assert_eq!(
            (rot.formula(), rot.values()),
            ("M ≈ 2 × W".into(), "2 × 5".into())
        );
        assert_eq!(rot.exact("ovf_kv_bytes").map(Ratio::ceil), Ok(10));
    }

    #[test]
    fn series_computed_and_element_bytes() {
        let per_layer = |x: &str| Expr::sym(x, x, f64::NAN);
        let e = Expr::named(
            "KV",
            Expr::mul([
                Expr::Series {
                    var: "ℓ".into(),
                    count: Box::new(s("L", 32)),
                    body: Box::new(Expr::add([per_layer("K_ℓ"), per_layer("V_ℓ")])),
                },
                Expr::element_bytes("b", 4, ""),
            ]),
        );
        assert_eq!(e.formula(), "KV = Σ_(ℓ = 1…L) (K_ℓ + V_ℓ) × b");
        assert_eq!(e.values(), "Σ_(ℓ = 1…32) (K_ℓ + V_ℓ) × 0.5");
        assert!(e.eval().is_nan());
        assert!(e.exact("ovf_kv_bytes").is_err());
        // A sub-formula whose value the code computed: its leaves carry none.
        let unknown = |x: &str| Expr::sym(x, "", f64::NAN);
        let per_token = Expr::computed(
            Expr::mul([unknown("g"), unknown("H"), unknown("b")]),
            "1,024 B",
            1024u64,
        );
        let e = Expr::named("B_block", Expr::mul([s("block_size", 16), per_token]));
        assert_eq!(e.formula(), "B_block = block_size × g × H × b");
        assert_eq!(e.values(), "16 × 1,024 B");
        assert_eq!(e.eval(), 16_384.0);
        assert_eq!(e.exact("ovf_kv_bytes").map(Ratio::ceil), Ok(16_384));
        let b = Expr::element_bytes("b_base", 16, "B");
        assert_eq!((b.formula(), b.values()), ("b_base".into(), "2 B".into()));
        assert_eq!(b.exact("ovf_kv_bytes"), Ok(Ratio { num: 16, den: 8 }));
    }
}
