//! Sizes as people write them on a command line: `16MiB`, `512 KiB`, `4096`.

/// A size in bytes: a number, optionally followed by KiB, MiB or GiB; at least 1 KiB.
pub fn parse_size(value: &str) -> Result<usize, String> {
    let text = value.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => (&text[..at], text[at..].trim()),
        None => (text, ""),
    };
    let multiplier: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "'{value}': use a number of bytes, or KiB, MiB or GiB (like 16MiB)"
            ))
        }
    };
    let bytes = number
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .ok_or_else(|| format!("'{value}' is not a size (like 16MiB)"))?;
    if bytes < 1024 {
        return Err(format!("'{value}' is too small: at least 1KiB"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("16MiB"), Ok(16 * 1024 * 1024));
        assert_eq!(parse_size("512 KiB"), Ok(512 * 1024));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(
            parse_size("16MB"),
            Err("'16MB': use a number of bytes, or KiB, MiB or GiB (like 16MiB)".into())
        );
        assert_eq!(
            parse_size("100"),
            Err("'100' is too small: at least 1KiB".into())
        );
    }
}
