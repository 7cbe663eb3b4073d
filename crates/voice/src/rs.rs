//! Reed–Solomon over GF(2^9), one field element a syllable: parity syllables that let the
//! decoder fill in syllables it could not read (erasures: a gap, a lost packet, a cut) and
//! correct ones it read wrong. Narrow-sense, roots α^1..α^P, α a root of x^9 + x^4 + 1;
//! a codeword is its data then its parity, highest degree first. Decoding is the textbook
//! errors-and-erasures decoder: syndromes, Berlekamp–Massey over the Forney syndromes,
//! Chien search, Forney's magnitudes. (No crate codes 9-bit symbols: the ones there are
//! work in GF(2^8) or GF(2^16), or fill erasures only.)

use std::sync::OnceLock;

/// Elements of the field, and the longest codeword it allows.
const Q: usize = 512;
pub const MAX_LEN: usize = Q - 1;
const POLY: u16 = 0x211;

struct Tables {
    exp: [u16; 2 * Q],
    log: [u16; Q],
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = Tables {
            exp: [0; 2 * Q],
            log: [0; Q],
        };
        let mut x: u16 = 1;
        for i in 0..MAX_LEN {
            t.exp[i] = x;
            t.log[x as usize] = i as u16;
            x <<= 1;
            if x & 0x200 != 0 {
                x ^= POLY;
            }
        }
        for i in MAX_LEN..2 * Q {
            t.exp[i] = t.exp[i - MAX_LEN];
        }
        t
    })
}

fn mul(a: u16, b: u16) -> u16 {
    if a == 0 || b == 0 {
        return 0;
    }
    let t = tables();
    t.exp[t.log[a as usize] as usize + t.log[b as usize] as usize]
}

fn inv(a: u16) -> u16 {
    let t = tables();
    t.exp[MAX_LEN - t.log[a as usize] as usize]
}

fn pow_a(i: usize) -> u16 {
    tables().exp[i % MAX_LEN]
}

/// p(x) at x, coefficients lowest degree first.
fn eval(p: &[u16], x: u16) -> u16 {
    p.iter().rev().fold(0, |acc, &c| mul(acc, x) ^ c)
}

/// The product of two polynomials, lowest degree first.
fn pmul(a: &[u16], b: &[u16]) -> Vec<u16> {
    let mut out = vec![0; a.len() + b.len() - 1];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            out[i + j] ^= mul(x, y);
        }
    }
    out
}

/// The `parity` symbols of `data` (each below 512), to send after it.
pub fn parity(data: &[u16], parity: usize) -> Vec<u16> {
    // g(x) = ∏ (x + α^i), i = 1..=parity, highest degree first.
    let mut g = vec![1u16];
    for i in 1..=parity {
        let mut next = vec![0u16; g.len() + 1];
        for (j, &c) in g.iter().enumerate() {
            next[j] ^= c;
            next[j + 1] ^= mul(c, pow_a(i));
        }
        g = next;
    }
    let mut rem = vec![0u16; parity];
    for &d in data {
        let f = d ^ rem.first().copied().unwrap_or(0);
        rem.rotate_left(1);
        if let Some(last) = rem.last_mut() {
            *last = 0;
        }
        for (r, &gc) in rem.iter_mut().zip(&g[1..]) {
            *r ^= mul(f, gc);
        }
    }
    rem
}

/// r(α^1..α^parity), `r` highest degree first.
fn syndromes(r: &[u16], parity: usize) -> Vec<u16> {
    (1..=parity)
        .map(|i| r.iter().fold(0, |acc, &c| mul(acc, pow_a(i)) ^ c))
        .collect()
}

/// The codeword mended: `word` is data then `parity` symbols, None where a symbol was not
/// read. None when more went wrong than the parity can mend with `spare` of it left
/// unused (an error costs 2, an erasure 1: 2·errors + erasures ≤ parity − spare). A spare
/// syndrome checks the mending: a word past mending passes it one time in 512.
pub fn mend(word: &[Option<u16>], parity: usize, spare: usize) -> Option<Vec<u16>> {
    let n = word.len();
    let budget = parity.checked_sub(spare)?;
    if n > MAX_LEN || parity >= n {
        return None;
    }
    let mut r: Vec<u16> = word.iter().map(|s| s.unwrap_or(0) & 0x1FF).collect();
    // Array index j is the coefficient of x^(n-1-j); its locator is α^(n-1-j).
    let erased: Vec<usize> = (0..n).filter(|&j| word[j].is_none()).collect();
    if erased.len() > budget {
        return None;
    }
    let synd = syndromes(&r, parity);
    if synd.iter().all(|&s| s == 0) {
        return Some(r);
    }
    let loc = |j: usize| pow_a(n - 1 - j);
    // The erasures' locator Γ(x) = ∏ (1 + X x), lowest degree first.
    let gamma = erased
        .iter()
        .fold(vec![1u16], |g, &j| pmul(&g, &[1, loc(j)]));
    let lambda = errors_locator(&synd, &gamma, erased.len(), parity)?;
    if 2 * (lambda.len() - 1) + erased.len() > budget {
        return None;
    }
    let psi = pmul(&lambda, &gamma);
    let omega: Vec<u16> = pmul(&synd, &psi).into_iter().take(parity).collect();
    // ψ'(x): in characteristic 2 only the odd terms survive.
    let dpsi: Vec<u16> = (1..psi.len())
        .map(|i| if i % 2 == 1 { psi[i] } else { 0 })
        .collect();
    let mut found = 0;
    for (j, rj) in r.iter_mut().enumerate() {
        let xinv = inv(loc(j));
        if eval(&psi, xinv) != 0 {
            continue;
        }
        let d = eval(&dpsi, xinv);
        if d == 0 {
            return None;
        }
        *rj ^= mul(eval(&omega, xinv), inv(d));
        found += 1;
    }
    let degree = psi.iter().rposition(|&c| c != 0).unwrap_or(0);
    if found != degree {
        return None;
    }
    syndromes(&r, parity).iter().all(|&s| s == 0).then_some(r)
}

/// The errors' locator Λ(x) by Berlekamp–Massey over the Forney syndromes (the
/// syndromes with the erasures taken out); None when the errors are too many.
fn errors_locator(synd: &[u16], gamma: &[u16], erasures: usize, parity: usize) -> Option<Vec<u16>> {
    let t: Vec<u16> = pmul(synd, gamma).into_iter().take(parity).collect();
    let (mut lam, mut prev) = (vec![1u16], vec![1u16]);
    let (mut l, mut m, mut b) = (0usize, 1usize, 1u16);
    for k in erasures..parity {
        let d = (0..=l.min(lam.len() - 1)).fold(0, |acc, i| acc ^ mul(lam[i], t[k - i]));
        if d == 0 {
            m += 1;
            continue;
        }
        let coef = mul(d, inv(b));
        let mut next = lam.clone();
        next.resize(next.len().max(prev.len() + m), 0);
        for (i, &p) in prev.iter().enumerate() {
            next[i + m] ^= mul(coef, p);
        }
        if 2 * l <= k - erasures {
            l = k - erasures + 1 - l;
            prev = lam;
            b = d;
            m = 1;
        } else {
            m += 1;
        }
        lam = next;
    }
    while lam.len() > 1 && lam.last() == Some(&0) {
        lam.pop();
    }
    (2 * (lam.len() - 1) + erasures <= parity).then_some(lam)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded generator, for the symbols and for where the damage falls.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, below: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % below
        }
    }

    fn codeword(rng: &mut Lcg, k: usize, p: usize) -> Vec<u16> {
        let data: Vec<u16> = (0..k).map(|_| rng.next(Q) as u16).collect();
        let mut w = data.clone();
        w.extend(parity(&data, p));
        w
    }

    #[test]
    fn a_codeword_has_no_syndrome_and_the_field_is_the_specs() {
        let t = tables();
        // α generates all 511 nonzero elements: x^9 + x^4 + 1 is primitive.
        let mut seen = vec![false; Q];
        for i in 0..MAX_LEN {
            seen[t.exp[i] as usize] = true;
        }
        assert_eq!(seen.iter().filter(|s| **s).count(), MAX_LEN);
        assert_eq!(pow_a(9), 0x11, "α^9 = α^4 + 1");
        let w = codeword(&mut Lcg(1), 20, 6);
        let got: Vec<Option<u16>> = w.iter().map(|&s| Some(s)).collect();
        assert_eq!(mend(&got, 6, 0), Some(w));
    }

    #[test]
    fn erasures_and_errors_within_the_parity_are_mended() {
        let mut rng = Lcg(7);
        for trial in 0..400 {
            let (k, p) = (5 + rng.next(60), 2 + rng.next(14));
            let w = codeword(&mut rng, k, p);
            let errors = rng.next(p / 2 + 1);
            let erasures = rng.next(p - 2 * errors + 1);
            let mut got: Vec<Option<u16>> = w.iter().map(|&s| Some(s)).collect();
            let mut hit = vec![false; w.len()];
            for e in 0..errors + erasures {
                let mut j = rng.next(w.len());
                while hit[j] {
                    j = rng.next(w.len());
                }
                hit[j] = true;
                got[j] = match e < errors {
                    true => Some(w[j] ^ (1 + rng.next(MAX_LEN)) as u16),
                    false => None,
                };
            }
            assert_eq!(
                mend(&got, p, 0).as_ref(),
                Some(&w),
                "trial {trial}: k {k}, parity {p}, {errors} errors, {erasures} erasures"
            );
        }
    }

    #[test]
    fn too_much_damage_is_refused_not_mended_wrong() {
        let mut rng = Lcg(3);
        let w = codeword(&mut rng, 30, 8);
        let mut got: Vec<Option<u16>> = w.iter().map(|&s| Some(s)).collect();
        for g in got.iter_mut().take(9) {
            *g = None;
        }
        assert_eq!(mend(&got, 8, 0), None, "9 erasures, 8 parity");
        got[0] = Some(w[0]);
        assert_eq!(mend(&got, 8, 0).as_ref(), Some(&w), "8 erasures, 8 parity");
        assert_eq!(
            mend(&got, 8, 1),
            None,
            "8 erasures and a syndrome kept spare"
        );
        let mut wrong = 0;
        for trial in 0..200 {
            let mut got: Vec<Option<u16>> = w.iter().map(|&s| Some(s)).collect();
            for j in 0..6 {
                let at = (trial * 7 + j * 5) % w.len();
                got[at] = Some(w[at] ^ (1 + rng.next(MAX_LEN)) as u16);
            }
            // Six errors with eight parity symbols: refused, or mended to another codeword
            // (the frame's CRC refuses that one), never to a word that is no codeword.
            if let Some(m) = mend(&got, 8, 0) {
                wrong += usize::from(m != w);
                let clean: Vec<Option<u16>> = m.iter().map(|&s| Some(s)).collect();
                assert_eq!(mend(&clean, 8, 0), Some(m));
            }
        }
        assert!(wrong < 20, "{wrong} of 200 mended to another codeword");
    }
}
