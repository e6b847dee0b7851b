//! Objects drawn at random from a CRD version's schema: of every shape it allows (optional
//! fields there or not, lists and maps of a few entries, numbers at and inside their
//! bounds, strings of their formats and lengths, enums), with labels and annotations, valid
//! by the schema as kube-apiserver checks it (`apiserver-rules`; CEL rules aside) and
//! defaulted as it would store them. The inputs of [`super::RoundTrips`].

use serde_json::{Map, Value, json};

/// Below this depth only required fields and the fewest items are drawn.
const MAX_DEPTH: usize = 8;

/// How many draws a case may take before the schema's refusals are reported.
const TRIES: usize = 64;

/// A small seeded generator (SplitMix64): one seed, one sequence of objects.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Whether a one-in-`n` chance came up.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n.max(1))
    }

    /// An integer in `lo..=hi` (`lo` when the range is empty).
    pub(crate) fn between(&mut self, lo: i128, hi: i128) -> i128 {
        if hi <= lo {
            return lo;
        }
        let span = u128::try_from(hi - lo)
            .unwrap_or(u128::MAX)
            .saturating_add(1);
        let offset = i128::try_from(u128::from(self.next()) % span).unwrap_or(0);
        lo + offset
    }

    /// An index below `n` (`n > 0`).
    pub(crate) fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(n.max(1)).unwrap_or(1)).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }
}

/// The version of a kind to draw objects of.
pub(crate) struct Version<'a> {
    /// `<group>/<version>`.
    pub(crate) api_version: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) namespaced: bool,
    /// Its `openAPIV3Schema`.
    pub(crate) schema: &'a Value,
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn number(schema: &Value, key: &str) -> Option<f64> {
    schema.get(key).and_then(Value::as_f64)
}

fn count(schema: &Value, key: &str) -> Option<i128> {
    schema.get(key).and_then(Value::as_u64).map(i128::from)
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The `case`-th object of `version`, valid by its schema and defaulted; or, when `TRIES`
/// draws in a row are refused by it, its last refusal.
pub(crate) fn object(version: &Version<'_>, case: usize, rng: &mut Rng) -> Result<Value, String> {
    let mut refused = String::new();
    for _ in 0..TRIES {
        let mut object = Map::new();
        object.insert("apiVersion".into(), version.api_version.into());
        object.insert("kind".into(), version.kind.into());
        object.insert("metadata".into(), metadata(version, case, rng));
        let root = draw_object(version.schema, 0, rng);
        for (key, value) in root {
            if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                object.insert(key, value);
            }
        }
        let mut object = Value::Object(object);
        let errors = apiserver_rules::schema::admit(version.schema, &mut object, &mut Vec::new());
        if errors.is_empty() {
            return Ok(object);
        }
        refused = apiserver_rules::field::aggregate(&errors);
        if errors.iter().any(|e| e.detail.contains("should match")) {
            refused.push_str(
                "; no string drawn for it matched its pattern: give the field an example that does (`+kubebuilder:example=<value>`), which the draw tries first",
            );
        }
    }
    Err(refused)
}

/// An object's metadata: its identity, and a few labels and annotations (none, sometimes).
fn metadata(version: &Version<'_>, case: usize, rng: &mut Rng) -> Value {
    let mut meta = json!({
        "name": format!("drawn-{case}"),
        "uid": uuid(rng),
        "resourceVersion": (rng.between(1, 99_999)).to_string(),
        "generation": rng.between(1, 9),
        "creationTimestamp": date_time(rng),
    });
    if version.namespaced {
        meta["namespace"] = json!("default");
    }
    let labels = ["app", "tier", "example.com/team", "app.kubernetes.io/name"];
    let values = ["web", "db", "a-1", ""];
    let notes = ["note", "example.com/owner", "example.com/config"];
    let texts = ["kept", "", "{\"a\":[1,2]}", "two\nlines"];
    for (field, keys, values) in [
        ("labels", &labels[..], &values[..]),
        ("annotations", &notes[..], &texts[..]),
    ] {
        let n = rng.between(0, 2);
        if n > 0 {
            let mut map = Map::new();
            for _ in 0..n {
                map.insert((*rng.pick(keys)).into(), (*rng.pick(values)).into());
            }
            meta[field] = Value::Object(map);
        }
    }
    meta
}

/// A value of `schema`.
fn draw(schema: &Value, depth: usize, rng: &mut Rng) -> Value {
    if let Some(options) = schema
        .get("enum")
        .and_then(Value::as_array)
        .filter(|o| !o.is_empty())
    {
        return rng.pick(options).clone();
    }
    if flag(schema, "x-kubernetes-int-or-string") {
        return if rng.one_in(2) {
            Value::from(rng.between(-5, 100) as i64)
        } else {
            Value::from(*rng.pick(&["1", "25%", "500m", "a"]))
        };
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => Value::Object(draw_object(schema, depth, rng)),
        Some("array") => array(schema, depth, rng),
        Some("string") => string(schema, rng),
        Some("integer") => integer(schema, rng),
        Some("number") => float(schema, rng),
        Some("boolean") => Value::Bool(rng.one_in(2)),
        _ => anything(depth, rng),
    }
}

/// An object of `schema`: its required properties, about half its others (one `oneOf`
/// branch's, when it has branches), or a few entries of a map.
fn draw_object(schema: &Value, depth: usize, rng: &mut Rng) -> Map<String, Value> {
    let mut out = Map::new();
    let mut must = required(schema);
    let mut excluded: Vec<&str> = Vec::new();
    if let Some(branches) = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .filter(|b| !b.is_empty())
    {
        let chosen = rng.index(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            if i == chosen {
                must.extend(required(branch));
            } else {
                excluded.extend(required(branch));
            }
        }
        excluded.retain(|k| !must.contains(k));
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, sub) in properties {
            let needed = must.contains(&key.as_str());
            if excluded.contains(&key.as_str())
                || (!needed && (depth >= MAX_DEPTH || rng.one_in(2)))
            {
                continue;
            }
            let value = if !needed && flag(sub, "nullable") && rng.one_in(8) {
                Value::Null
            } else {
                draw(sub, depth + 1, rng)
            };
            out.insert(key.clone(), value);
        }
    } else if let Some(entries) = schema.get("additionalProperties") {
        let lo = count(schema, "minProperties").unwrap_or(0);
        let hi = count(schema, "maxProperties").map_or(lo + 2, |hi| hi.min(lo + 2));
        let n = if depth >= MAX_DEPTH {
            lo
        } else {
            rng.between(lo, hi)
        };
        for i in 0..n {
            let value = if entries.is_object() {
                draw(entries, depth + 1, rng)
            } else {
                anything(depth + 1, rng)
            };
            out.insert(format!("{}{i}", word(rng, 1, 6)), value);
        }
    } else if flag(schema, "x-kubernetes-preserve-unknown-fields") && depth < MAX_DEPTH {
        for i in 0..rng.between(0, 2) {
            out.insert(format!("field{i}"), anything(depth + 1, rng));
        }
    }
    if flag(schema, "x-kubernetes-embedded-resource") {
        out.entry("apiVersion").or_insert_with(|| json!("v1"));
        out.entry("kind").or_insert_with(|| json!("ConfigMap"));
        out.entry("metadata")
            .or_insert_with(|| json!({"name": "embedded"}));
    }
    out
}

/// A list of `schema`'s items: from `minItems` to a few more, without the duplicates a set
/// or map list refuses.
fn array(schema: &Value, depth: usize, rng: &mut Rng) -> Value {
    let lo = count(schema, "minItems").unwrap_or(0);
    let hi = count(schema, "maxItems").map_or(lo + 3, |hi| hi.min(lo + 3));
    let n = if depth >= MAX_DEPTH {
        lo
    } else {
        rng.between(lo, hi)
    };
    let items_schema = schema.get("items").cloned().unwrap_or(Value::Null);
    let keys: Vec<&str> = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("map") => schema
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let unique = !keys.is_empty()
        || schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("set");
    let mut items: Vec<Value> = Vec::new();
    let mut seen: Vec<Value> = Vec::new();
    for _ in 0..n {
        let item = draw(&items_schema, depth + 1, rng);
        let identity = if keys.is_empty() {
            item.clone()
        } else {
            Value::Array(keys.iter().map(|k| item[*k].clone()).collect())
        };
        if unique && seen.contains(&identity) {
            continue;
        }
        seen.push(identity);
        items.push(item);
    }
    Value::Array(items)
}

/// A string of `schema`'s format, or of its length (and pattern, when one of a few usual
/// strings matches it).
fn string(schema: &Value, rng: &mut Rng) -> Value {
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && let Some(value) = formatted(format, rng)
    {
        return Value::String(value);
    }
    let lo = count(schema, "minLength").unwrap_or(0);
    let hi = count(schema, "maxLength").map_or(lo + 12, |hi| hi.min(lo + 12));
    if schema.get("pattern").is_some() {
        let given = ["default", "example"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_str).map(str::to_owned));
        let usual = [
            "a",
            "abc",
            "a-1",
            "a.b",
            "a_b",
            "A",
            "1",
            "example",
            "10Gi",
            "1m",
            "a/b",
            "example.com",
            "https://example.com",
        ]
        .map(str::to_owned);
        let fits = |s: &String| {
            let mut errors = Vec::new();
            apiserver_rules::schema::validate(schema, &json!(s), "s", "s", &mut errors);
            errors.is_empty()
        };
        if let Some(found) = given.chain(usual).find(fits) {
            return Value::String(found);
        }
        // Strings drawn from the pattern itself, a few times over for its length bounds.
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            for _ in 0..8 {
                match super::pattern::matching(pattern, rng) {
                    Some(drawn) if fits(&drawn) => return Value::String(drawn),
                    Some(_) => {}
                    None => break,
                }
            }
        }
    }
    Value::String(word(rng, lo, hi))
}

/// A string of `lo..=hi` characters: letters, digits, `-`, a space now and then, and an
/// `é` (lengths count characters).
fn word(rng: &mut Rng, lo: i128, hi: i128) -> String {
    let n = rng.between(lo, hi);
    let alphabet: Vec<char> = "abcdefghijklmnopqrstuvwxyz0123456789-".chars().collect();
    (0..n)
        .map(|_| {
            if rng.one_in(24) {
                *rng.pick(&[' ', 'é', 'Z'])
            } else {
                *rng.pick(&alphabet)
            }
        })
        .collect()
}

fn date_time(rng: &mut Rng) -> String {
    format!(
        "20{:02}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        rng.between(10, 39),
        rng.between(1, 12),
        rng.between(1, 28),
        rng.between(0, 23),
        rng.between(0, 59),
        rng.between(0, 59)
    )
}

fn uuid(rng: &mut Rng) -> String {
    let hex = format!("{:016x}{:016x}", rng.next(), rng.next());
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// A value of a string format kube-apiserver checks, `None` for one it does not.
fn formatted(format: &str, rng: &mut Rng) -> Option<String> {
    let normalized: String = format.chars().filter(|c| *c != '-').collect();
    Some(match normalized.as_str() {
        "datetime" => date_time(rng),
        "date" => date_time(rng)[..10].to_owned(),
        "duration" => (*rng.pick(&["30s", "1m0s", "1h30m0s", "1.5s", "0"])).to_owned(),
        "byte" => {
            let bytes: Vec<u8> = (0..rng.between(0, 9)).map(|_| rng.next() as u8).collect();
            apiserver_rules::base64::base64_encode(&bytes)
        }
        "ipv4" => format!(
            "10.{}.{}.{}",
            rng.between(0, 255),
            rng.between(0, 255),
            rng.between(1, 254)
        ),
        "ipv6" => format!("fd00::{:x}", rng.between(1, 0xffff)),
        "cidr" => (*rng.pick(&["10.0.0.0/8", "192.168.1.0/24", "fd00::/64"])).to_owned(),
        "mac" => "00:1a:2b:3c:4d:5e".to_owned(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid(rng),
        "hostname" => (*rng.pick(&["example.com", "a", "node-1.cluster.local"])).to_owned(),
        "email" => "someone@example.com".to_owned(),
        "uri" => (*rng.pick(&["https://example.com/a", "urn:a"])).to_owned(),
        _ => return None,
    })
}

/// The bounds of an integer of `format` (Rust's integer types, as schemars names them).
fn integer_bounds(format: Option<&str>) -> (i128, i128) {
    match format {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int64") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint8") => (0, u8::MAX.into()),
        Some("uint16") => (0, u16::MAX.into()),
        Some("uint32") => (0, u32::MAX.into()),
        Some("uint64" | "uint") => (0, u64::MAX.into()),
        _ => (i32::MIN.into(), i32::MAX.into()),
    }
}

/// An integer within `schema`'s bounds and its format's: one of the bounds, a small one or
/// any, a multiple of `multipleOf` when it has one.
fn integer(schema: &Value, rng: &mut Rng) -> Value {
    let (mut lo, mut hi) = integer_bounds(schema.get("format").and_then(Value::as_str));
    if let Some(min) = number(schema, "minimum") {
        let min = min.ceil() as i128 + i128::from(flag(schema, "exclusiveMinimum"));
        lo = lo.max(min);
    }
    if let Some(max) = number(schema, "maximum") {
        let max = max.floor() as i128 - i128::from(flag(schema, "exclusiveMaximum"));
        hi = hi.min(max);
    }
    let mut n = match rng.between(0, 3) {
        0 => lo,
        1 => hi,
        2 => rng.between(lo.max(-10), hi.min(10).max(lo.max(-10))),
        _ => rng.between(lo, hi),
    };
    if let Some(step) = number(schema, "multipleOf")
        .map(|m| m as i128)
        .filter(|m| *m > 0)
    {
        n = (n / step) * step;
        if n < lo {
            n += step;
        }
    }
    match u64::try_from(n) {
        Ok(u) => Value::from(u),
        Err(_) => Value::from(i64::try_from(n).unwrap_or(i64::MIN)),
    }
}

/// A number within `schema`'s bounds, in quarters (exact as `f32` too).
fn float(schema: &Value, rng: &mut Rng) -> Value {
    let lo = number(schema, "minimum").unwrap_or(-1e6);
    let hi = number(schema, "maximum").unwrap_or(1e6).max(lo);
    let quarters = rng.between((lo * 4.0).ceil() as i128, (hi * 4.0).floor() as i128);
    let mut x = quarters as f64 / 4.0;
    if flag(schema, "exclusiveMinimum") && x <= lo {
        x = lo + (hi - lo) / 2.0;
    }
    if flag(schema, "exclusiveMaximum") && x >= hi {
        x = lo + (hi - lo) / 2.0;
    }
    json!(x)
}

/// Any JSON, for fields whose schema keeps unknown fields.
fn anything(depth: usize, rng: &mut Rng) -> Value {
    match rng.between(0, 4) {
        0 if depth < MAX_DEPTH => {
            let mut map = Map::new();
            for i in 0..rng.between(0, 2) {
                map.insert(format!("k{i}"), anything(depth + 1, rng));
            }
            Value::Object(map)
        }
        1 => Value::from(rng.between(-100, 100) as i64),
        2 => Value::Bool(rng.one_in(2)),
        _ => Value::String(word(rng, 0, 8)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "required": ["name", "mode"], "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
                "mode": {"type": "string", "enum": ["Fast", "Slow"]},
                "replicas": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10},
                "ratio": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": true},
                "when": {"type": "string", "format": "date-time"},
                "ports": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port"],
                    "items": {"type": "object", "required": ["port"],
                        "properties": {"port": {"type": "integer", "minimum": 1, "maximum": 3}}}},
                "labels": {"type": "object", "maxProperties": 2,
                    "additionalProperties": {"type": "string"}},
                "paused": {"type": "boolean", "default": false},
            }},
        }})
    }

    #[test]
    fn drawn_objects_are_valid_defaulted_and_varied() {
        let schema = schema();
        let version = Version {
            api_version: "example.com/v1",
            kind: "Gizmo",
            namespaced: true,
            schema: &schema,
        };
        let mut rng = Rng::new(7);
        let objects: Vec<Value> = (0..200)
            .map(|case| object(&version, case, &mut rng).unwrap())
            .collect();
        let present = |key: &str| {
            objects
                .iter()
                .filter(|o| o["spec"].get(key).is_some())
                .count()
        };
        for o in &objects {
            let spec = &o["spec"];
            assert!(
                ["Fast", "Slow"].contains(&spec["mode"].as_str().unwrap()),
                "{o}"
            );
            assert!(spec["paused"].is_boolean(), "defaulted: {o}");
            assert_eq!(o["metadata"]["namespace"], "default");
            if let Some(r) = spec.get("replicas") {
                assert!((1..=10).contains(&r.as_i64().unwrap()), "{o}");
            }
        }
        // Optional fields are sometimes there and sometimes not.
        for key in ["replicas", "ratio", "when", "ports", "labels"] {
            assert!((20..180).contains(&present(key)), "{key}: {}", present(key));
        }
        assert!(
            objects
                .iter()
                .any(|o| o["metadata"].get("labels").is_some())
        );
        // The same seed draws the same objects.
        let mut again = Rng::new(7);
        assert_eq!(object(&version, 0, &mut again).unwrap(), objects[0]);
    }

    #[test]
    fn strings_are_drawn_from_their_pattern() {
        let schema = json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object",
            "required": ["currency", "window"],
            "properties": {
                "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "window": {"type": "string", "maxLength": 16, "pattern": "^([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+$"}}}}});
        let version = Version {
            api_version: "example.com/v1",
            kind: "Gizmo",
            namespaced: false,
            schema: &schema,
        };
        let mut rng = Rng::new(5);
        for case in 0..50 {
            let o = object(&version, case, &mut rng).unwrap();
            assert_eq!(o["spec"]["currency"].as_str().unwrap().len(), 3, "{o}");
        }
    }

    #[test]
    fn a_schema_nothing_satisfies_is_reported() {
        let schema = json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "maxLength": 10, "pattern": "^zz[0-9]{40}$"}}}}});
        let version = Version {
            api_version: "example.com/v1",
            kind: "Gizmo",
            namespaced: false,
            schema: &schema,
        };
        let err = object(&version, 0, &mut Rng::new(1)).unwrap_err();
        assert!(err.contains("spec.name in body should match"), "{err}");
        assert!(err.contains("`+kubebuilder:example=<value>`"), "{err}");
    }
}
