//! `docs` on a small API: the Markdown and HTML pages, escaping, and the pages kept
//! in a directory (verify, stale pages removed).

use std::path::Path;

use serde_json::json;

use super::*;

fn backup() -> Value {
    json!({
        "spec": {
            "group": "backup.example.com",
            "names": {"kind": "Backup", "plural": "backups", "shortNames": ["bk"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "metadata": {"type": "object"},
                    "spec": {
                        "type": "object",
                        "description": "The desired state of a Backup.",
                        "required": ["replicas"],
                        "x-kubernetes-validations": [{
                            "rule": "self.replicas <= 3 || has(self.schedule)",
                            "message": "more than 3 replicas need a schedule"
                        }],
                        "properties": {
                            "replicas": {"type": "integer", "format": "int32",
                                "minimum": 1, "maximum": 10, "default": 1,
                                "description": "How many replicas, 1 to 10."},
                            "schedule": {"type": "string", "pattern": "^(\\S+\\s+){4}\\S+$",
                                "description": "When to take a backup."},
                            "targets": {"type": "array", "items": {"type": "object",
                                "properties": {"name": {"type": "string",
                                    "enum": ["a", "b"]}}}}
                        }
                    }
                }}}
            }]
        }
    })
}

#[test]
fn a_kind_page_shows_fields_types_validations_rules_and_links() {
    let files = pages(
        &[backup()],
        "kube-codegen docs --input src/apis --output docs/api",
        Format::Markdown,
    );
    assert_eq!(files.len(), 2);
    let page = &files[0].contents;
    assert_eq!(files[0].path, Path::new("backup.example.com_v1alpha1.md"));
    assert!(page.starts_with(MARKDOWN.header), "{page}");
    for shown in [
        "## Backup",
        "short names `bk`, subresources `status`, the storage version",
        "| Replicas | integer | `.spec.replicas` |  |",
        "| `spec` | [object](#backupspec) |",
        "### Backup.spec",
        "Validation: rule `self.replicas <= 3 || has(self.schedule)`: \"more than 3 replicas need a schedule\"",
        "| `replicas` | integer (int32) | How many replicas, 1 to 10. | required; default `1`; minimum 1; maximum 10 |",
        "| `schedule` | string | When to take a backup. | pattern `^(\\S+\\s+){4}\\S+$` |",
        "| `targets` | [[]object](#backupspectargets) |",
        "### Backup.spec.targets[]",
        "one of `\"a\"`, `\"b\"`",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    assert!(!page.contains("### Backup.metadata"), "{page}");
    assert!(
        files[1]
            .contents
            .contains("- [backup.example.com/v1alpha1](backup.example.com_v1alpha1.md)")
    );
}

const COMMAND: &str = "kube-codegen docs --input src/apis --output docs/api --format html";

/// The HTML pages of `crds`, by file name.
fn html_pages(crds: &[Value]) -> Vec<OutputFile> {
    pages(crds, COMMAND, Format::Html)
}

/// The values of `attr="..."` in `html`.
fn attributes<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let lead = format!("{attr}=\"");
    html.match_indices(&lead)
        .map(|(at, _)| {
            let rest = &html[at + lead.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn an_html_page_shows_what_the_markdown_page_shows_with_the_same_anchors() {
    let files = html_pages(&[backup()]);
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            Path::new("backup.example.com_v1alpha1.html"),
            Path::new("index.html")
        ]
    );
    let page = &files[0].contents;
    assert!(
        page.starts_with(&format!(
            "{}\n<!-- {COMMAND} -->\n<!DOCTYPE html>\n<html lang=\"en\">\n",
            HTML.header
        )),
        "{page}"
    );
    for shown in [
        "<title>backup.example.com/v1alpha1</title>",
        "<li><a href=\"#backup\">Backup</a></li>",
        "<h2 id=\"backup\">Backup</h2>\n<p><code>apiVersion: backup.example.com/v1alpha1</code>, Namespaced, resource <code>backups</code>, short names <code>bk</code>, subresources <code>status</code>, the storage version.</p>",
        "<tr><td>Replicas</td><td>integer</td><td><code>.spec.replicas</code></td><td></td></tr>",
        "<tr><td><code>spec</code></td><td><a href=\"#backupspec\">object</a></td><td>The desired state of a Backup.</td><td>rule <code>self.replicas &lt;= 3",
        "<h3 id=\"backupspec\">Backup.spec</h3>\n<p>The desired state of a Backup.</p>\n<p>Validation: rule <code>self.replicas &lt;= 3 || has(self.schedule)</code>: &quot;more than 3 replicas need a schedule&quot;</p>",
        "<tr><td><code>replicas</code></td><td>integer (int32)</td><td>How many replicas, 1 to 10.</td><td>required; default <code>1</code>; minimum 1; maximum 10</td></tr>",
        "<tr><td><code>schedule</code></td><td>string</td><td>When to take a backup.</td><td>pattern <code>^(\\S+\\s+){4}\\S+$</code></td></tr>",
        "<tr><td><code>targets</code></td><td><a href=\"#backupspectargets\">[]object</a></td>",
        "<h3 id=\"backupspectargets\">Backup.spec.targets[]</h3>",
        "<td>one of <code>&quot;a&quot;</code>, <code>&quot;b&quot;</code></td>",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    assert!(page.ends_with("</table>\n</body>\n</html>\n"), "{page}");
    // Every link within the page reaches a heading of it, and nothing is fetched.
    let ids = attributes(page, "id");
    for href in attributes(page, "href") {
        match href.strip_prefix('#') {
            Some(id) => assert!(ids.contains(&id), "#{id} has no heading in:\n{page}"),
            None => assert_eq!(href, "index.html"),
        }
    }
    for absent in ["<script", "src=", "<link", "http://", "https://"] {
        assert!(!page.contains(absent), "{absent} in:\n{page}");
    }
    let index = &files[1].contents;
    assert!(
        index.contains(
            "<li><a href=\"backup.example.com_v1alpha1.html\">backup.example.com/v1alpha1</a></li>"
        ),
        "{index}"
    );
}

#[test]
fn html_escapes_every_text_from_the_schema() {
    let mut crd = backup();
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["description"] = json!("Keeps <b>bold</b> & \"quoted\" 'text'.\n\nUse `a < b` here.");
    spec["properties"]["schedule"]["description"] = json!("<script>alert('x')</script>");
    spec["properties"]["schedule"]["pattern"] = json!("^<[a-z]+>&$");
    spec["x-kubernetes-validations"] = json!([
        {"rule": "self.a < self.b && self.c > 0", "message": "a must be < b & \"c\" > 0"},
        {"rule": "self.d != ''", "messageExpression": "'d <' + self.e"}
    ]);
    crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["description"] =
        json!("count <n> & more");
    let page = &html_pages(&[crd])[0].contents;
    for shown in [
        "<p>Keeps &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; &#39;text&#39;.</p>\n<p>Use <code>a &lt; b</code> here.</p>",
        "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</td>",
        "pattern <code>^&lt;[a-z]+&gt;&amp;$</code>",
        "rule <code>self.a &lt; self.b &amp;&amp; self.c &gt; 0</code>: &quot;a must be &lt; b &amp; &quot;c&quot; &gt; 0&quot;",
        "rule <code>self.d != &#39;&#39;</code>: message <code>&#39;d &lt;&#39; + self.e</code>",
        "<td>count &lt;n&gt; &amp; more</td>",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    for raw in ["<b>", "<script>", "<n>", "a < b", "&&"] {
        assert!(!page.contains(raw), "{raw} unescaped in:\n{page}");
    }
    // A path cannot end the header's comment early.
    let files = pages(
        &[backup()],
        "kube-codegen docs --output a-->b",
        Format::Html,
    );
    assert!(
        files[0]
            .contents
            .contains("<!-- kube-codegen docs --output a-- >b -->\n")
    );
}

#[test]
fn pages_are_the_same_bytes_every_time_and_both_formats_hold_each() {
    let crds = [backup()];
    let both = pages(&crds, COMMAND, Format::Both);
    let names: Vec<String> = both.iter().map(|f| f.path.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "backup.example.com_v1alpha1.md",
            "index.md",
            "backup.example.com_v1alpha1.html",
            "index.html"
        ]
    );
    let markdown = pages(&crds, COMMAND, Format::Markdown);
    assert_eq!(both[..2], markdown[..]);
    assert_eq!(both[2..], html_pages(&crds)[..]);
    assert_eq!(both, pages(&crds, COMMAND, Format::Both));
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kube-codegen-docs-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn keep(dir: &Path, files: &[OutputFile], format: Format, verify: bool) -> Result<String, Error> {
    output::write_or_verify_styles(dir, files, format.styles(), verify, COMMAND)
}

#[test]
fn verify_finds_a_drifted_html_page_and_writing_removes_stale_pages() {
    let dir = scratch("keep");
    let files = pages(&[backup()], COMMAND, Format::Both);
    keep(&dir, &files, Format::Both, false).unwrap();
    assert!(keep(&dir, &files, Format::Both, true).is_ok());
    // Hand edits of a generated page are drift.
    let page = dir.join("backup.example.com_v1alpha1.html");
    let edited = std::fs::read_to_string(&page)
        .unwrap()
        .replace("How many replicas", "How many");
    std::fs::write(&page, edited).unwrap();
    let drift = keep(&dir, &files, Format::Both, true).unwrap_err();
    assert!(
        matches!(&drift, Error::OutOfDate { details, .. } if details.contains("drifted:") && details.contains("v1alpha1.html")),
        "{drift:?}"
    );
    // A version gone: its pages (of both formats) are stale, removed by a write and named by
    // verify; files without the header are left alone.
    let mut gone = backup();
    gone["spec"]["versions"][0]["name"] = json!("v1");
    std::fs::write(dir.join("notes.html"), "<p>mine</p>\n").unwrap();
    let now = pages(&[gone], COMMAND, Format::Both);
    let stale = keep(&dir, &now, Format::Both, true).unwrap_err();
    assert!(
        matches!(&stale, Error::OutOfDate { details, .. } if details.contains("stale:") && details.contains("v1alpha1.html")),
        "{stale:?}"
    );
    keep(&dir, &now, Format::Both, false).unwrap();
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "backup.example.com_v1.html",
            "backup.example.com_v1.md",
            "index.html",
            "index.md",
            "notes.html"
        ]
    );
    // Markdown alone manages Markdown pages alone: the HTML ones stay.
    let markdown = pages(&[backup()], COMMAND, Format::Markdown);
    keep(&dir, &markdown, Format::Markdown, false).unwrap();
    assert!(dir.join("backup.example.com_v1.html").is_file());
    assert!(!dir.join("backup.example.com_v1.md").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_page_in_the_way_stops_every_write() {
    let dir = scratch("refused");
    std::fs::write(dir.join("index.html"), "<p>mine</p>\n").unwrap();
    let files = pages(&[backup()], COMMAND, Format::Both);
    let refused = keep(&dir, &files, Format::Both, false).unwrap_err();
    assert!(matches!(refused, Error::Refused(_)), "{refused:?}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only index.html, untouched");
    assert_eq!(
        std::fs::read_to_string(dir.join("index.html")).unwrap(),
        "<p>mine</p>\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
