//! Reading text files, the same way in every loader (quoting their values in messages is
//! [`crate::quote`]'s).
//!
//! - A leading UTF-8 byte-order mark (what some Windows editors write) is skipped, so the
//!   first line parses like the others.
//! - Invalid UTF-8 is reported with the line and the byte offset of the first bad byte, so it
//!   can be found with `xxd -s OFFSET`.

use crate::error::InputError;
use std::path::Path;

const BOM: &str = "\u{feff}";

/// Reads a text file as UTF-8, without its byte-order mark.
pub fn read(path: &Path) -> Result<String, InputError> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, e))?;
    decode(path, bytes)
}

/// Reads a text file of at most `max` bytes (see [`read`]): a larger one is refused before it
/// is read whole, so no parser is handed more than that. `what` names the kind of file.
pub fn read_at_most(path: &Path, max: u64, what: &str) -> Result<String, InputError> {
    use std::io::Read as _;
    let too_large = |found: String| {
        InputError::File {
        path: path.to_path_buf(),
        message: format!(
            "is {found} bytes, more than the {max} bytes {what} may have (README, \"Limits\"); is this the file you meant?"
        ),
    }
    };
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, e))?;
    if let Ok(m) = file.metadata() {
        if m.is_file() && m.len() > max {
            return Err(too_large(m.len().to_string()));
        }
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::io(path, e))?;
    if bytes.len() as u64 > max {
        return Err(too_large(format!("more than {max}")));
    }
    decode(path, bytes)
}

/// Bytes as UTF-8 text without a leading byte-order mark; `path` names them in the error.
pub fn decode(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with(BOM) {
                text.drain(..BOM.len());
            }
            Ok(text)
        }
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
            Err(InputError::line(
                path,
                line,
                format!("invalid UTF-8 at byte offset {offset}: the file must be UTF-8 text"),
            ))
        }
    }
}

/// `text` without a leading byte-order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_skipped_and_bad_utf8_located() {
        let p = Path::new("h.jsonl");
        assert_eq!(decode(p, b"\xef\xbb\xbf{}".to_vec()).unwrap(), "{}");
        let e = decode(p, b"{}\n{\"a\xff\"}".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.jsonl:2: invalid UTF-8 at byte offset 6: the file must be UTF-8 text"
        );
    }
}
