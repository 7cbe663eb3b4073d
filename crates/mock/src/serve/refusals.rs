//! The requests the mock refused, by what was asked and the words it answered with: a
//! format it does not produce, a model the scenario lacks, a body it cannot read. A run
//! says these first, since every failure after them follows from them. A few kinds of
//! refusal are kept word for word; any beyond them are only counted.

use std::sync::Mutex;

/// One kind of refusal: what was asked, the status and words of the answer, how often.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    /// "speech request", "transcription", "chat completion", …
    pub what: &'static str,
    pub status: u16,
    pub message: String,
    pub count: u64,
}

/// Kinds of refusal kept word for word.
const KINDS: usize = 8;

#[derive(Default)]
pub struct Refusals {
    kinds: Mutex<(Vec<Refusal>, u64)>,
}

impl Refusals {
    pub fn add(&self, what: &'static str, status: u16, message: &str) {
        let Ok(mut k) = self.kinds.lock() else {
            return;
        };
        let (list, more) = &mut *k;
        let same = |r: &Refusal| r.what == what && r.status == status && r.message == message;
        if let Some(r) = list.iter_mut().find(|r| same(r)) {
            r.count += 1;
        } else if list.len() < KINDS {
            list.push(Refusal {
                what,
                status,
                message: message.to_string(),
                count: 1,
            });
        } else {
            *more += 1;
        }
    }

    /// The kinds kept, the most frequent first, and how many refusals of other kinds.
    pub fn list(&self) -> (Vec<Refusal>, u64) {
        let Ok(k) = self.kinds.lock() else {
            return (Vec::new(), 0);
        };
        let mut list = k.0.clone();
        list.sort_by_key(|r| std::cmp::Reverse(r.count));
        (list, k.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_what_and_words_and_the_rest_only_counted() {
        let r = Refusals::default();
        r.add("speech request", 400, "mp3 is not produced");
        for _ in 0..2 {
            r.add("chat completion", 404, "no model x");
        }
        r.add("speech request", 400, "mp3 is not produced");
        r.add("speech request", 400, "mp3 is not produced");
        let (list, more) = r.list();
        assert_eq!((list.len(), more), (2, 0));
        assert_eq!((list[0].what, list[0].count), ("speech request", 3));
        assert_eq!((list[1].status, list[1].count), (404, 2));
        for i in 0..KINDS {
            r.add("transcription", 400, &format!("bad {i}"));
        }
        assert_eq!(r.list().1, 2);
    }
}
