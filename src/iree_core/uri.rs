//! Device URIs, `driver://path?key=value&key=value`, split the way IREE v3.3.0 splits them
//! (`iree_uri_split` and `iree_uri_split_params`). Pure functions over byte slices.

/// The three parts of a device URI.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct DeviceUri<'a> {
    pub driver: &'a [u8],
    pub path: &'a [u8],
    pub params: &'a [u8],
}

fn split_once(value: &[u8], separator: u8) -> (&[u8], &[u8]) {
    match value.iter().position(|b| *b == separator) {
        Some(i) => (&value[..i], &value[i + 1..]),
        None => (value, &[]),
    }
}

/// Splits `driver:rest`; `rest` loses a leading `//`, or else a single leading `/`, and is
/// then split at the first `?` into path and parameters.
pub fn split(uri: &[u8]) -> DeviceUri<'_> {
    let (driver, rest) = split_once(uri, b':');
    let rest = rest
        .strip_prefix(b"//")
        .or_else(|| rest.strip_prefix(b"/"))
        .unwrap_or(rest);
    let (path, params) = split_once(rest, b'?');
    DeviceUri {
        driver,
        path,
        params,
    }
}

fn trim(mut value: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = value {
        if first.is_ascii_whitespace() || *first == 0x0b {
            value = rest
        } else {
            break;
        }
    }
    while let [rest @ .., last] = value {
        if last.is_ascii_whitespace() || *last == 0x0b {
            value = rest
        } else {
            break;
        }
    }
    value
}

/// Splits `a=1&b=2` into pairs; one leading and one trailing `&` are ignored, surrounding
/// whitespace is trimmed, a key without `=` has an empty value, and empty entries between
/// `&&` become empty pairs exactly as IREE produces them.
pub fn split_params(params: &[u8]) -> Vec<(&[u8], &[u8])> {
    let params = params.strip_prefix(b"&").unwrap_or(params);
    let params = params.strip_suffix(b"&").unwrap_or(params);
    let params = trim(params);
    if params.is_empty() {
        return Vec::new();
    }
    // IREE counts one pair per '&' plus one, but a trailing empty entry after the last '&'
    // (possible once trimming exposed it) is never filled; keep the filled ones only.
    let mut pairs = Vec::new();
    let mut remaining = params;
    while !remaining.is_empty() {
        let (entry, rest) = split_once(remaining, b'&');
        pairs.push(split_once(entry, b'='));
        remaining = rest;
    }
    pairs
}

/// IREE refuses URIs with more parameters than this.
pub const MAX_URI_PARAMS: usize = 128;

#[cfg(test)]
mod tests {
    use super::*;

    fn s(uri: &str) -> (String, String, String) {
        let u = split(uri.as_bytes());
        let t = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
        (t(u.driver), t(u.path), t(u.params))
    }

    #[test]
    fn splits_driver_path_and_params() {
        assert_eq!(
            s("hip://0?a=1&b=2"),
            ("hip".into(), "0".into(), "a=1&b=2".into())
        );
        assert_eq!(s("hip"), ("hip".into(), "".into(), "".into()));
        assert_eq!(s("hip://"), ("hip".into(), "".into(), "".into()));
        assert_eq!(s("hip:/GPU-1"), ("hip".into(), "GPU-1".into(), "".into()));
        assert_eq!(s("hip:0,1"), ("hip".into(), "0,1".into(), "".into()));
        assert_eq!(s("hip://?q"), ("hip".into(), "".into(), "q".into()));
        assert_eq!(s(""), ("".into(), "".into(), "".into()));
    }

    #[test]
    fn splits_params_like_iree() {
        let p = split_params(b"&a=1&b&c=x=y&");
        assert_eq!(
            p,
            vec![
                (&b"a"[..], &b"1"[..]),
                (&b"b"[..], &b""[..]),
                (&b"c"[..], &b"x=y"[..])
            ]
        );
        assert!(split_params(b"  ").is_empty());
        assert_eq!(split_params(b"a=1&&b=2").len(), 3);
    }
}
