//! Tensor parallelism's one validity rule, as vLLM applies it: TP must divide the attention
//! (query) heads of every layer; and either TP divides the KV heads, or the KV heads divide TP
//! (then each rank holds one replicated KV head). MLA layers (DeepSeek) shard their heads the
//! same way and have no separate KV heads; SSM layers accept any degree.
//!
//! Mamba-2's B/C groups are padded to the degree when it does not divide them
//! ([`group_padding`], [`state_elems_per_gpu`]).
//!
//! Every caller (KV bytes, the memory budgets, the roofline's operators, the performance model
//! and the planner) checks through [`check_model`] or [`check_heads`], so a degree is refused
//! with the same sentence everywhere.

use crate::base::error::{CalcError, Phrase};
use crate::model::{Mixer, ModelDesc, SsmGroups};

/// Checks `tp` against one layer's heads (`kv_heads` 0 for a layer without separate KV heads):
/// 0 is out of range; a degree that does not divide the query heads gives
/// [`CalcError::TpDoesNotDivide`]; one that neither divides nor is divided by the KV heads is
/// out of range, "a divisor or multiple of {kv}".
pub fn check_heads(num_heads: u64, kv_heads: u64, tp: u64) -> Result<(), CalcError> {
    if tp == 0 {
        return Err(out_of_range(tp, Phrase::tr("rng_whole_at_least_1")));
    }
    if num_heads == 0 || !num_heads.is_multiple_of(tp) {
        return Err(CalcError::TpDoesNotDivide {
            tp,
            heads: num_heads,
        });
    }
    if kv_heads > 0 && !kv_heads.is_multiple_of(tp) && !tp.is_multiple_of(kv_heads) {
        return Err(out_of_range(
            tp,
            Phrase::tr("rng_kv_divisor").val("kv", kv_heads),
        ));
    }
    Ok(())
}

/// Checks `tp` against every attention and MLA layer of the model (the first failing layer's
/// error). A model without such layers (quick mode, pure SSM) accepts any degree ≥ 1.
pub fn check_model(m: &ModelDesc, tp: u64) -> Result<(), CalcError> {
    if tp == 0 {
        return Err(out_of_range(tp, Phrase::tr("rng_whole_at_least_1")));
    }
    for l in &m.layers {
        match l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                ..
            } => check_heads(num_heads, kv_heads, tp)?,
            Mixer::Mla { num_heads, .. } => check_heads(num_heads, 0, tp)?,
            Mixer::Ssm { .. } => {}
        }
    }
    Ok(())
}

fn out_of_range(tp: u64, range: Phrase) -> CalcError {
    CalcError::range_error(Phrase::verbatim("tp"), tp, range)
}

/// The groups vLLM adds to a Mamba-2 mixer's `n_groups` under tensor parallelism of degree
/// `tp` before splitting them `tp` ways: `extra_groups_for_head_shards` (`tp − n_groups` when
/// `tp` does not divide `n_groups`), 0 where that would remove groups.
pub fn group_padding(g: &SsmGroups, tp: u64) -> u64 {
    let tp = tp.max(1);
    if g.groups.is_multiple_of(tp) {
        0
    } else {
        tp.saturating_sub(g.groups)
    }
}

/// Recurrent state elements of one sequence on one of `tp` GPUs (0 for attention): the
/// channels split `tp` ways, rounded up, after padding Mamba-2's groups as vLLM's
/// `mamba2_state_shape` does ([`group_padding`]).
pub fn state_elems_per_gpu(mixer: &Mixer, tp: u64) -> u64 {
    match *mixer {
        Mixer::Ssm {
            state_elems,
            groups,
            ..
        } => {
            let pad = groups.map_or(0, |g| group_padding(&g, tp).saturating_mul(g.conv_elems));
            state_elems.saturating_add(pad).div_ceil(tp.max(1))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::i18n::Lang;
    use crate::model::config::parse_model_text;

    /// The sentences a refused degree gives, pinned (every caller shows these).
    #[test]
    fn refusals_name_the_rule() {
        assert_eq!(
            check_heads(32, 8, 0).map_err(|e| e.to_string()),
            Err(CalcError::OutOfRange {
                field: Phrase::verbatim("tp"),
                value: "0".into(),
                range: Phrase::tr("rng_whole_at_least_1"),
            }
            .to_string())
        );
        assert!(matches!(
            check_heads(32, 8, 3),
            Err(CalcError::TpDoesNotDivide { tp: 3, heads: 32 })
        ));
        // 32 query heads split 4 ways, but 6 KV heads neither divide by 4 nor divide 4.
        let e = check_heads(32, 6, 4).err().map(|e| e.message(Lang::En));
        let range = Phrase::tr("rng_kv_divisor").val("kv", 6).text(Lang::En);
        assert!(e.as_deref().is_some_and(|s| s.contains(&range)), "{e:?}");
        assert!(
            check_heads(32, 8, 16).is_ok(),
            "KV heads divide TP: replicated"
        );
        assert!(check_heads(32, 8, 8).is_ok());
    }

    /// Every attention layer is checked, MLA too; SSM layers accept any degree.
    #[test]
    fn the_whole_model_is_checked() {
        let llama = parse_model_text(include_str!(
            "../../../../data/presets/meta-llama__Llama-2-7b-hf.json"
        ))
        .expect("preset parses");
        assert!(check_model(&llama, 4).is_ok());
        assert!(matches!(
            check_model(&llama, 3),
            Err(CalcError::TpDoesNotDivide { tp: 3, heads: 32 })
        ));
        let ds = parse_model_text(include_str!(
            "../../../../data/presets/deepseek-ai__DeepSeek-V3.json"
        ))
        .expect("preset parses");
        assert!(check_model(&ds, 8).is_ok());
        assert!(matches!(
            check_model(&ds, 3),
            Err(CalcError::TpDoesNotDivide { tp: 3, .. })
        ));
        let mamba = parse_model_text(include_str!(
            "../../../../data/presets/ArthurZ__mamba-2.8b.json"
        ))
        .expect("preset parses");
        assert!(check_model(&mamba, 3).is_ok());
        assert!(check_model(&mamba, 0).is_err());
    }
}
