//! The built-in catalog as the page's modules parse it (`data/accelerators.app.csv`), without
//! what a first screen neither shows nor computes with (`tests::slim`), stored:
//! what the first-answer module (`crates/first`) reads a link's GPUs from, so it neither links
//! nor runs the catalog's parser (3–5 ms of a link's first answer in Chromium, most of it the
//! first, unoptimised run of the parser and its float parsing). `data/accelerators_first.bin`
//! holds the [`Catalog`] in borsh's binary form; made by this module's test
//! (`REGENERATE_FIRST_CATALOG=1 cargo test -p llmcalc-core --lib catalog_first`), which fails
//! when the file is not what the parser makes of the table today.

use super::catalog::Catalog;
use borsh::BorshDeserialize;
use std::sync::OnceLock;

/// The stored catalog.
static BYTES: &[u8] = include_bytes!("../../../../data/accelerators_first.bin");

/// The stored catalog, read once (empty were the bytes unreadable: a test guarantees they are
/// not, and with no GPU the first screen declines every link).
pub fn builtin() -> &'static Catalog {
    static STORED: OnceLock<Catalog> = OnceLock::new();
    STORED.get_or_init(|| {
        Catalog::try_from_slice(BYTES).unwrap_or(Catalog {
            accelerators: Vec::new(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::generated::check_or_write;
    use crate::hardware::peak::{Peak, Peaks};

    /// The app table without what no first screen shows nor computes with: the texts
    /// (sources, notes, vendor, form factor, the interconnect's kind, the price's source and
    /// date) and the figures of the other sections (peaks, interconnect bandwidth, PCIe
    /// generation, power, year). Kept: the ids, names and aliases a link's GPU is found by, the
    /// memory and its type, the bandwidth, the architecture, the price.
    pub(crate) fn slim(mut c: Catalog) -> Catalog {
        for a in &mut c.accelerators {
            for text in [
                &mut a.vendor,
                &mut a.form_factor,
                &mut a.architecture_source,
                &mut a.source,
                &mut a.notes,
                &mut a.interconnect.kind,
            ] {
                text.clear();
            }
            if let Some(p) = &mut a.price {
                p.source.clear();
                p.date.clear();
            }
            let none = Peak::NotPublished;
            a.peaks = Peaks {
                fp32: none,
                tf32: none,
                bf16: none,
                fp16: none,
                fp8: none,
                int8: none,
                fp6: none,
                fp4: none,
            };
            a.interconnect.bidirectional = None;
            (a.pcie_gen, a.tdp_w, a.year) = (None, None, 0);
        }
        c
    }

    #[test]
    fn the_stored_catalog_is_the_parsed_app_table() {
        let parsed = slim(
            Catalog::parse(include_str!("../../../../data/accelerators.app.csv"))
                .expect("the app table parses"),
        );
        let made = borsh::to_vec(&parsed).expect("serialises");
        let fresh = check_or_write(
            BYTES,
            &made,
            "data/accelerators_first.bin",
            "REGENERATE_FIRST_CATALOG",
            "catalog_first",
        );
        if !fresh {
            return;
        }
        assert_eq!(builtin(), &parsed);
        assert!(builtin().accelerators.len() > 20);
    }
}
