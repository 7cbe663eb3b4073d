//! A Universal Scalability Law fit as facts: the fitted parameters and why the fit is no
//! prediction to trust (`UslNote`), or why none was made (`UslRefusal`). `words::usl`
//! says them. A run recorded when these were sentences reads them back through `legacy`.

use serde::{Deserialize, Deserializer, Serialize};

/// A Universal Scalability Law fit, or why none was made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UslReading {
    Fitted(Usl),
    Refused {
        #[serde(deserialize_with = "legacy::refusal")]
        refused: UslRefusal,
    },
}

impl Default for UslReading {
    fn default() -> Self {
        UslReading::Refused {
            refused: UslRefusal::Unread,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    /// Throughput of one session alone (turns/s).
    pub lambda: f64,
    /// Contention.
    pub sigma: f64,
    /// Coherency (crosstalk).
    pub kappa: f64,
    /// Concurrency where the fitted throughput peaks (None when kappa is 0).
    pub peak_concurrency: Option<f64>,
    pub peak_throughput: Option<f64>,
    /// R² of the fitted throughput against the measured one.
    pub r2: f64,
    pub points: usize,
    /// Why the fit is no prediction to trust, when it is not.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "legacy::note"
    )]
    pub note: Option<UslNote>,
}

/// Why no fit was made.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum UslRefusal {
    /// Fewer than 4 steps had throughput (this many): three parameters need more.
    TooFewSteps { steps: usize },
    /// The levels are too alike to determine the parameters.
    Undetermined,
    /// The fit's throughput of one session came out non-positive.
    NonPositive,
    /// No ladder was analysed (a run that ended before its analysis).
    Unread,
}

/// Why a fit is no prediction to trust.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum UslNote {
    /// Its peak (turns/s) lies below the measured peak: a poor fit.
    PeakBelowMeasured { peak: f64, measured: f64 },
    /// Its peak (sessions) lies beyond the measured plateau (from that level).
    PeakBeyondPlateau { peak: f64, from: f64 },
}

/// Runs recorded when the refusal and the note were sentences: each sentence had one
/// shape, read back here with its figures.
pub mod legacy {
    use super::*;
    use serde_json::Value;

    /// The first numbers in a sentence, in order ("1,234.5" reads as 1234.5).
    fn numbers(said: &str) -> Vec<f64> {
        said.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
            .filter_map(|w| w.replace(',', "").trim_matches('.').parse().ok())
            .collect()
    }

    /// A refusal: its fact, or the sentence of a run recorded before ("the USL needs at
    /// least 4 steps with throughput; this ladder has 2", "the steps do not determine the
    /// USL …", "the fit gave a non-positive …").
    pub fn refusal<'de, D: Deserializer<'de>>(d: D) -> Result<UslRefusal, D::Error> {
        let v = Value::deserialize(d)?;
        let Value::String(said) = v else {
            return serde_json::from_value(v).map_err(serde::de::Error::custom);
        };
        Ok(if said.is_empty() {
            UslRefusal::Unread
        } else if said.contains("non-positive") {
            UslRefusal::NonPositive
        } else if said.contains("at least") {
            let steps = numbers(&said).last().copied().unwrap_or(0.0);
            UslRefusal::TooFewSteps {
                steps: steps as usize,
            }
        } else {
            UslRefusal::Undetermined
        })
    }

    /// A note: its fact, or the sentence of a run recorded before ("the fit's peak (3.1
    /// turns/s) lies below the measured 4.2: …", "the fit's peak at 41 sessions lies
    /// beyond the measured plateau from 16 sessions: …"); any other reads as none.
    pub fn note<'de, D: Deserializer<'de>>(d: D) -> Result<Option<UslNote>, D::Error> {
        let v = Value::deserialize(d)?;
        let said = match v {
            Value::Null => return Ok(None),
            Value::String(s) => s,
            v => {
                return serde_json::from_value(v)
                    .map(Some)
                    .map_err(serde::de::Error::custom)
            }
        };
        let n = numbers(&said);
        Ok(match n.as_slice() {
            [peak, measured, ..] if said.contains("lies below the measured") => {
                Some(UslNote::PeakBelowMeasured {
                    peak: *peak,
                    measured: *measured,
                })
            }
            [peak, from, ..] if said.contains("beyond the measured plateau") => {
                Some(UslNote::PeakBeyondPlateau {
                    peak: *peak,
                    from: *from,
                })
            }
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fit_recorded_with_sentences_reads_them_as_facts() {
        let refused: UslReading = serde_json::from_str(
            r#"{"refused":"the USL needs at least 4 steps with throughput; this ladder has 3"}"#,
        )
        .unwrap();
        let too_few = UslRefusal::TooFewSteps { steps: 3 };
        assert_eq!(refused, UslReading::Refused { refused: too_few });
        let odd: UslReading = serde_json::from_str(
            r#"{"refused":"the steps do not determine the USL (concurrency levels too alike)"}"#,
        )
        .unwrap();
        let undetermined = UslRefusal::Undetermined;
        assert_eq!(
            odd,
            UslReading::Refused {
                refused: undetermined
            }
        );
        let fitted = r#"{"lambda":2,"sigma":0.5,"kappa":0.006,"peak_concurrency":41.2,"peak_throughput":3.3,"r2":0.77,"points":6,"note":"the fit's peak at 41 sessions lies beyond the measured plateau from 16 sessions: not a prediction to trust"}"#;
        let UslReading::Fitted(u) = serde_json::from_str(fitted).unwrap() else {
            panic!("a fit")
        };
        let beyond = UslNote::PeakBeyondPlateau {
            peak: 41.0,
            from: 16.0,
        };
        assert_eq!(u.note, Some(beyond));
        let below = r#"{"lambda":2,"sigma":0.5,"kappa":0.006,"peak_concurrency":4,"peak_throughput":3.1,"r2":0.7,"points":6,"note":"the fit's peak (3.1 turns/s) lies below the measured 4.2: a poor fit, not a prediction"}"#;
        let UslReading::Fitted(u) = serde_json::from_str(below).unwrap() else {
            panic!("a fit")
        };
        let below = UslNote::PeakBelowMeasured {
            peak: 3.1,
            measured: 4.2,
        };
        assert_eq!(u.note, Some(below));
    }

    #[test]
    fn a_fit_keeps_its_facts_through_json() {
        for r in [
            UslReading::Refused {
                refused: UslRefusal::NonPositive,
            },
            UslReading::Fitted(Usl {
                lambda: 2.0,
                points: 5,
                note: Some(UslNote::PeakBelowMeasured {
                    peak: 3.0,
                    measured: 4.0,
                }),
                ..Usl::default()
            }),
        ] {
            let back: UslReading =
                serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
            assert_eq!(back, r);
        }
    }
}
