//! Symbolic links inside an output folder are not followed: a `charts` link pointing
//! elsewhere would have ctxlab write (or replace files) outside the folder it was given. The
//! folder itself may be a link (the user chose it); what lies inside it is checked.

use std::path::{Component, Path};

/// An error message when `relative` (a file to write under `dir`) passes through, or is, a
/// symbolic link; `None` when it is safe to write.
pub fn through_link(dir: &Path, relative: &Path) -> Option<String> {
    let mut at = dir.to_path_buf();
    for c in relative.components() {
        let Component::Normal(name) = c else {
            return Some(format!(
                "{}: not a plain path inside {}",
                relative.display(),
                dir.display()
            ));
        };
        at.push(name);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Some(format!(
                "{}: is a symbolic link inside the output folder; ctxlab does not write through links (remove it, or choose another output folder)",
                at.display()
            ));
        }
    }
    None
}
