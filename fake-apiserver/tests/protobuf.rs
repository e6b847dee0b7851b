//! Protobuf request bodies kubectl's typed commands sent (`tests/fixtures/protobuf`, with
//! the JSON kubectl sends for the same commands): each decodes to that JSON.

use fake_apiserver::builtin::protobuf::{DecodeError, decode};
use serde_json::Value;

#[test]
fn every_captured_protobuf_body_decodes_to_the_json_kubectl_sends() {
    let dir = format!("{}/tests/fixtures/protobuf", env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::path);
    for entry in entries {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "hex") {
            continue;
        }
        let hex = std::fs::read_to_string(&path).unwrap();
        let hex = hex.trim();
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let json_path = path.with_extension("").with_extension("json");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let result = decode(&bytes);
        if name.contains("quota") {
            // A kind the fake does not serve is refused, not misread.
            let Err(DecodeError::Object { message, .. }) = result else {
                panic!("{name}: {result:?}");
            };
            assert!(message.starts_with("no kind"), "{name}: {message}");
        } else {
            assert_eq!(result, Ok(expected), "{name}");
        }
        checked += 1;
    }
    assert_eq!(checked, 19);
}

#[test]
fn a_body_without_the_envelope_is_refused() {
    assert_eq!(
        decode(b"{}"),
        Err(DecodeError::Envelope(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
                .into()
        ))
    );
}

#[test]
fn a_cut_body_is_refused_as_go_refuses_it() {
    let hex = std::fs::read_to_string(format!(
        "{}/tests/fixtures/protobuf/06-deployment.pb.hex",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let bytes: Vec<u8> = (0..hex.trim().len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    // Cut where one of the envelope's fields ends, the body is whole: at byte 27, after
    // the type, a Deployment with no fields, as Go reads it too (Go writes a nil
    // `containers` as null); at 210 and 212, before the empty content type and encoding,
    // the full one. Every other cut is refused; none panics.
    let empty = decode(&bytes[..27]).unwrap();
    assert_eq!(empty["kind"], "Deployment");
    let spec = serde_json::json!({
        "template": {"metadata": {}, "spec": {"containers": null}},
        "strategy": {},
    });
    assert_eq!(empty["spec"], spec);
    let full = decode(&bytes).unwrap();
    assert_eq!(decode(&bytes[..210]), Ok(full.clone()));
    assert_eq!(decode(&bytes[..212]), Ok(full));
    for end in (4..bytes.len()).filter(|e| ![27, 210, 212].contains(e)) {
        assert!(decode(&bytes[..end]).is_err(), "cut at {end}");
    }
}
