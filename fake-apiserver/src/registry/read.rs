//! GET and LIST: one object, or a page of them (label and field selectors, `limit` and
//! continue tokens, `resourceVersion`), as stored JSON when no conversion is needed.

use bytes::Bytes;
use serde_json::{Value, json};

use super::reply::Out;
use super::scale::scale_of;
use crate::admission::decode::options::ListOptions;
use crate::conversion::{self, Conversions};
use crate::error::ApiError;
use crate::resource::ObjectRef;
use crate::rules::base64::{base64_decode, base64_encode};
use crate::store::State;
use crate::store::objects::{Encoded, selected};

/// GET of object `at`: its stored JSON as it is when stored in the version asked for, else
/// converted (and, for `/scale`, its `Scale`).
pub(crate) fn get(
    state: &State,
    at: ObjectRef<'_>,
    conversions: &Conversions,
) -> Result<Out, ApiError> {
    let (rt, ns, name, sub) = (at.rt, at.namespace, at.name, at.subresource);
    let key = State::key(rt, ns, name);
    Ok(match state.store.raw(&key) {
        None => return Err(ApiError::not_found(&rt.group, &rt.plural, name)),
        // Stored in the version asked for: its bytes as they are.
        Some(stored) if sub.is_none() && rt.is_api_version(&stored.api_version) => {
            Out::Json(stored.json.clone())
        }
        Some(_) => {
            let obj = conversion::serve(rt, &state.get(rt, ns, name)?, conversions)?;
            Out::Owned(if sub == Some("scale") {
                scale_of(rt, &obj)
            } else {
                obj
            })
        }
    })
}

/// A `resourceVersion` on a get must be a number the server has reached.
pub(crate) fn check_get_resource_version(rv: &str, current: u64) -> Result<(), ApiError> {
    if rv.is_empty() || rv == "0" {
        return Ok(());
    }
    match rv.parse::<u64>() {
        Ok(n) if n > current => Err(ApiError::too_large_resource_version(n, current)),
        Ok(_) => Ok(()),
        Err(_) => Err(ApiError::custom(
            500,
            "",
            &format!(
                "resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
            ),
        )),
    }
}

/// The resource version a list reads at: a number at most the current version.
fn list_version(options: &ListOptions, current: u64) -> Result<u64, ApiError> {
    let rv = options.resource_version.as_str();
    if rv.is_empty() || rv == "0" {
        return Ok(current);
    }
    let n: u64 = rv.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "invalid resource version: resourceVersion: Invalid value: \"{rv}\": strconv.ParseUint: parsing \"{rv}\": invalid syntax"
        ))
    })?;
    if n > current {
        return Err(ApiError::too_large_resource_version(n, current));
    }
    Ok(current)
}

pub(crate) fn list(
    state: &State,
    at: ObjectRef<'_>,
    options: &ListOptions,
    table: bool,
    conversions: &Conversions,
) -> Result<Out, ApiError> {
    let (rt, ns) = (at.rt, at.namespace);
    let (labels, fields) = options.selectors(rt)?;
    let start_after = match options.continue_token.as_str() {
        "" => None,
        token => {
            if !matches!(options.resource_version.as_str(), "" | "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            let (start, token_rv) = decode_continue(token)?;
            let current = state.store.resource_version();
            if let Some(token_rv) = token_rv {
                if token_rv > current {
                    return Err(ApiError::too_large_resource_version(token_rv, current));
                }
                if token_rv < state.store.compacted() {
                    return Err(continue_expired(&start));
                }
            }
            Some(start)
        }
    };
    let rv = list_version(options, state.store.resource_version())?;
    let limit = usize::try_from(options.limit)
        .ok()
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    // A seek to the continue position, then only what the page needs: with selectors the
    // scan stops at the first match past the page; without, the rest is only counted
    // (`remainingItemCount`, which the real server sets only for lists without selectors).
    let unselected = labels.is_empty() && fields.is_empty();
    let mut items = Vec::new();
    let mut last_pos = "";
    let mut more = false;
    let mut remaining = 0u64;
    let mut objects = state
        .store
        .list(&rt.storage_key(), ns, start_after.as_deref());
    for (pos, obj) in objects.by_ref() {
        if !unselected && !selected(&labels, &fields, obj) {
            continue;
        }
        if items.len() == limit {
            more = true;
            remaining = 1;
            break;
        }
        items.push(obj);
        last_pos = pos;
    }
    if more && unselected {
        // From the start, the store's count; after a continue position, the rest counted
        // (kube-apiserver's watch cache also gathers the rest to count it).
        remaining = match start_after {
            None => state
                .store
                .count(&rt.storage_key(), ns)
                .saturating_sub(items.len()) as u64,
            Some(_) => remaining + objects.count() as u64,
        };
    }
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if more {
        metadata["continue"] = json!(encode_continue(last_pos, rv as i64));
        if unselected {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let kind = format!("{}List", rt.kind);
    let as_stored = items.iter().all(|e| rt.is_api_version(&e.api_version));
    if table || !as_stored {
        let items: Vec<Value> = items.into_iter().filter_map(Encoded::value).collect();
        if let Some(stored) = items
            .iter()
            .find_map(|o| conversion::removed_version(rt, o))
        {
            let gv = rt.api_version();
            return Err(ApiError::invalid_stored_version(
                &stored,
                Some((&gv, &rt.kind)),
            ));
        }
        let items = conversion::serve_all(rt, items, conversions)?;
        if table {
            return Ok(Out::Owned(super::table::table(rt, &items, metadata)));
        }
        return Ok(Out::Owned(
            json!({"apiVersion": rt.api_version(), "kind": kind, "metadata": metadata, "items": items}),
        ));
    }
    // Every item is stored in the version asked for: its JSON as it is, between the list's
    // own fields.
    let head = json!({"apiVersion": rt.api_version(), "kind": kind, "metadata": metadata});
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.pop(); // the closing brace
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&item.json);
    }
    out.extend_from_slice(b"]}");
    Ok(Out::Json(Bytes::from(out)))
}

/// A continue token as the real server writes it: base64 of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":"<key>\u0000"}`.
/// A continue token as kube-apiserver writes it: `{"v":"meta.k8s.io/v1","rv":<rv>,
/// "start":"<key>\u0000"}` in Go's `base64.RawURLEncoding` (URL alphabet, no padding); an
/// `rv` of -1 continues from the current state (the token a 410 hands out).
fn encode_continue(pos: &str, rv: i64) -> String {
    let json = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{pos}\u{0}")});
    base64_encode(json.to_string().as_bytes())
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

/// The start key of a continue token and its resource version (`None` for -1, the current
/// state), or kube-apiserver's 400 for one it cannot read.
fn decode_continue(token: &str) -> Result<(String, Option<u64>), ApiError> {
    let bad = |why: String| ApiError::bad_request(format!("invalid continue token: {why}"));
    let illegal = |at: usize| {
        bad(format!(
            "continue key is not valid: illegal base64 data at input byte {at}"
        ))
    };
    // Go's RawURLEncoding: the URL alphabet, no padding.
    if let Some(at) = token
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    {
        return Err(illegal(at));
    }
    let mut standard = token.replace('-', "+").replace('_', "/");
    while !standard.len().is_multiple_of(4) {
        standard.push('=');
    }
    let bytes = base64_decode(&standard).map_err(illegal)?;
    let parsed: Value = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("continue key is not valid: {e}")))?;
    if parsed.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        let v = parsed.get("v").and_then(Value::as_str).unwrap_or("");
        return Err(bad(format!(
            "continue key is not valid: server does not recognize this encoded version {v}"
        )));
    }
    let rv = match parsed.get("rv").and_then(Value::as_i64).unwrap_or(0) {
        -1 => None,
        n if n > 0 => Some(n as u64),
        _ => {
            return Err(bad(
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
            ));
        }
    };
    let start = parsed.get("start").and_then(Value::as_str).unwrap_or("");
    if start.is_empty() {
        return Err(bad(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
        ));
    }
    Ok((start.trim_end_matches('\u{0}').to_owned(), rv))
}

/// kube-apiserver's 410 for a continue token older than what it keeps: with a token that
/// continues from the current state instead.
fn continue_expired(start: &str) -> ApiError {
    let mut err = ApiError::custom(
        410,
        "Expired",
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    err.details = Some(json!({crate::error::LIST_CONTINUE: encode_continue(start, -1)}));
    err
}
