//! The Hub's count beside the calculator's, and the difference explained.

use super::answers::{CountSource, HubCount};
use crate::base::error::Phrase;
use crate::base::units::fmt_sig;
use crate::model::desc::ModelDesc;
use serde::Serialize;

/// Our count beside the Hub's, with the difference explained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The calculator's `params_total`.
    pub ours: u64,
    /// The Hub's count.
    pub hub: u64,
    /// `hub − ours` (parameters; negative when the checkpoint stores fewer).
    pub difference: i128,
    /// The sentences that explain the difference (and how the Hub's figure was found).
    pub explanation: Vec<Phrase>,
}

/// Sets the Hub's count beside the calculator's and explains the difference.
pub fn compare(m: &ModelDesc, hub: &HubCount) -> Comparison {
    let ours = m.params.total;
    let difference = i128::from(hub.total) - i128::from(ours);
    let diff = crate::base::derivation::group(difference.unsigned_abs() as u64);
    let pct = if ours > 0 {
        format!(
            "{}%",
            fmt_sig(difference.unsigned_abs() as f64 / ours as f64 * 100.0)
        )
    } else {
        "—".to_string()
    };
    let quantized = m.weights.method != "none" && m.weights.dtype.bits() < 8;
    let mut explanation = vec![match difference.signum() {
        0 => Phrase::tr("phr_hub_same"),
        1 => Phrase::tr("phr_hub_more")
            .val("diff", &diff)
            .val("pct", &pct),
        _ if quantized => Phrase::tr("phr_hub_fewer_packed")
            .val("diff", &diff)
            .val("pct", &pct)
            .val("method", &m.weights.method),
        _ => Phrase::tr("phr_hub_fewer")
            .val("diff", &diff)
            .val("pct", &pct),
    }];
    match (hub.source, hub.from_bytes) {
        (CountSource::IndexBytes, Some((size, dtype))) => explanation.push(
            Phrase::tr("phr_hub_estimated")
                .val("bytes", crate::base::derivation::group(size))
                .val("bits", dtype.bits())
                .val("dtype", dtype.id()),
        ),
        (CountSource::IndexParameters, _) => {
            explanation.push(Phrase::tr("phr_hub_from_index_params"));
        }
        _ => {}
    }
    Comparison {
        ours,
        hub: hub.total,
        difference,
        explanation,
    }
}

#[cfg(test)]
mod tests {
    use super::super::answers::{CountSource, HubCount};
    use super::super::test_support::fixture;
    use super::*;
    use crate::base::dtype::Dtype;
    use crate::base::error::Phrase;
    use crate::base::i18n::Lang;
    use crate::base::units::fmt_sig;
    use crate::model::config::parse_model_text;

    #[test]
    fn the_difference_is_explained() {
        let cfg = parse_model_text(&fixture("meta-llama__Llama-2-7b-hf.json"));
        let Ok(m) = cfg else { panic!("{cfg:?}") };
        let ours = m.params.total;
        let hub = |total: u64, source: CountSource| HubCount {
            total,
            by_dtype: Vec::new(),
            source,
            from_bytes: None,
        };
        let same = compare(&m, &hub(ours, CountSource::Api));
        assert_eq!((same.ours, same.hub, same.difference), (ours, ours, 0));
        assert_eq!(same.explanation, vec![Phrase::tr("phr_hub_same")]);
        // A vision tower of 400M parameters that the language model does not count.
        let tower = 400_000_000u64;
        let more = compare(&m, &hub(ours + tower, CountSource::Api));
        assert_eq!(more.difference, i128::from(tower));
        let text = more.explanation[0].text(Lang::En);
        assert!(
            text.contains(&crate::base::derivation::group(tower)),
            "{text}"
        );
        assert!(
            text.contains(&format!("{}%", fmt_sig(tower as f64 / ours as f64 * 100.0))),
            "{text}"
        );
        let fewer = compare(&m, &hub(ours - 1, CountSource::IndexParameters));
        assert_eq!(fewer.difference, -1);
        assert_eq!(fewer.explanation.len(), 2);
        assert!(fewer.explanation[0]
            .text(Lang::En)
            .contains("fewer parameters"));
        // An int4 checkpoint: the fewer stored elements are explained by the packing.
        let mut q = m.clone();
        q.weights.dtype = Dtype::Int4;
        q.weights.method = "gptq".into();
        let packed = compare(&q, &hub(ours / 4, CountSource::Api));
        assert!(
            packed.explanation[0].text(Lang::En).contains("gptq"),
            "{:?}",
            packed.explanation
        );
        let est = HubCount {
            from_bytes: Some((ours * 2, Dtype::Bf16)),
            ..hub(ours, CountSource::IndexBytes)
        };
        let e = compare(&m, &est);
        assert!(e.explanation[1]
            .text(Lang::En)
            .contains(&crate::base::derivation::group(ours * 2)));
    }
}
