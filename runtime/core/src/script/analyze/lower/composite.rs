//! Types built from others: unions, intersections, enums, and the built-in and utility types
//! (`Array`, `Record`, `Partial`, `Pick`...).

use super::*;

impl Lowering<'_, '_> {
    pub(super) fn union(&mut self, m: &Rc<ModuleInfo>, env: &Env, u: &TsUnionType) -> R<Lowered> {
        let mut flat = Vec::new();
        flatten_union(&u.types, &mut flat);
        let (mut null, mut undefined, mut any) = (false, false, false);
        let mut members: Vec<Value> = Vec::new();
        for ty in flat {
            if let TsType::TsKeywordType(k) = ty {
                match k.kind {
                    TsKeywordTypeKind::TsNullKeyword => {
                        null = true;
                        continue;
                    }
                    TsKeywordTypeKind::TsUndefinedKeyword | TsKeywordTypeKind::TsVoidKeyword => {
                        undefined = true;
                        continue;
                    }
                    TsKeywordTypeKind::TsNeverKeyword => continue,
                    _ => {}
                }
            }
            let lowered = self.lower(m, env, ty)?;
            undefined |= lowered.undefined;
            let mut schema = lowered.schema;
            any |= is_any(&schema);
            null |= strip_null(&mut schema);
            if is_null(&schema) {
                continue;
            }
            // A member that is itself a union contributes its members.
            match schema {
                Value::Object(mut o) if o.len() == 1 && o.contains_key("anyOf") => {
                    if let Some(Value::Array(inner)) = o.remove("anyOf") {
                        for s in inner {
                            push_unique(&mut members, s);
                        }
                    }
                }
                schema => push_unique(&mut members, schema),
            }
        }
        let schema = if any {
            json!({})
        } else {
            match members.len() {
                0 => json!({"type": "null"}),
                1 => members.pop().unwrap_or_default(),
                _ => merge_members(members),
            }
        };
        let schema = if null { allow_null(schema) } else { schema };
        Ok(Lowered { schema, undefined })
    }

    pub(super) fn intersection(&mut self, m: &Rc<ModuleInfo>, env: &Env, it: &TsIntersectionType) -> R<Value> {
        // `T & {}` is `T` without null and undefined, the idiom behind `"a" | (string & {})`.
        let empty = |t: &&TsType| matches!(t, TsType::TsTypeLit(lit) if lit.members.is_empty());
        let kept: Vec<&TsType> = it.types.iter().map(|t| &**t).filter(|t| !empty(t)).collect();
        match kept[..] {
            [] => return Ok(Shape::declared().into_value()),
            [only] if it.types.len() > 1 => {
                let mut schema = self.lower(m, env, only)?.schema;
                strip_null(&mut schema);
                return Ok(schema);
            }
            _ => {}
        }
        let mut merged: Option<Shape> = None;
        for ty in kept {
            let schema = self.lower(m, env, ty)?.value();
            if is_any(&schema) {
                continue; // `T & unknown` is `T`
            }
            let Some(mut shape) = Shape::from_value(&schema) else {
                return Err(self.unsupported(
                    it.span,
                    &format!(
                        "cannot be merged into one object: `{}` is not an object type",
                        self.an.snippet(ty.span())
                    ),
                ));
            };
            shape.description = None;
            match &mut merged {
                None => merged = Some(shape),
                Some(acc) => {
                    if let Err(why) = acc.merge(shape, true) {
                        return Err(self.unsupported(it.span, &format!("cannot be merged into one object: {why}")));
                    }
                }
            }
        }
        Ok(merged.map_or_else(|| json!({}), Shape::into_value))
    }

    pub(super) fn builtin(
        &mut self,
        m: &Rc<ModuleInfo>,
        env: &Env,
        name: &str,
        args: &[Box<TsType>],
        span: Span,
    ) -> R<Option<Lowered>> {
        let arity = match name {
            "Array" | "ReadonlyArray" | "Partial" | "Required" | "Readonly" | "NonNullable" | "Promise" => 1,
            "Record" | "Pick" | "Omit" => 2,
            _ => return Ok(None),
        };
        if name == "Promise" {
            return Err(self.unsupported(
                span,
                "is not a JSON value (only a tool's whole output may be a Promise)",
            ));
        }
        let [first, rest @ ..] = args else {
            return Err(self.fail(span, format!("`{name}` takes {arity} type argument(s)")));
        };
        if args.len() != arity {
            return Err(self.fail(span, format!("`{name}` takes {arity} type argument(s)")));
        }
        let lowered = self.lower(m, env, first)?;
        let schema = match name {
            "Readonly" => return Ok(Some(lowered)),
            "NonNullable" => {
                let mut schema = lowered.schema;
                strip_null(&mut schema);
                schema
            }
            "Array" | "ReadonlyArray" => json!({"type": "array", "items": lowered.value()}),
            "Partial" | "Required" => {
                let mut shape = self.shape_of(lowered.value(), first, name)?;
                for prop in &mut shape.props {
                    prop.required = name == "Required";
                }
                shape.into_value()
            }
            "Record" => self.record(m, env, first, lowered, rest)?,
            _ => {
                // Pick, Omit
                let shape = self.shape_of(lowered.value(), first, name)?;
                self.pick_or_omit(m, env, name, shape, rest, span)?
            }
        };
        Ok(Some(Lowered::plain(schema)))
    }

    /// `Record<K, V>`, `K` lowered already.
    fn record(
        &mut self,
        m: &Rc<ModuleInfo>,
        env: &Env,
        first: &TsType,
        keys: Lowered,
        rest: &[Box<TsType>],
    ) -> R<Value> {
        let value = match rest.first() {
            // `Record<string, never>`, the usual "no arguments": an empty object.
            Some(v) if is_never(v) => return Ok(Shape::declared().into_value()),
            Some(v) => self.lower(m, env, v)?.value(),
            None => json!({}),
        };
        match keys_of(&keys.value()) {
            Some(Keys::AnyString) => Ok(json!({"type": "object", "additionalProperties": value})),
            Some(Keys::Listed(keys)) => {
                let mut shape = Shape::declared();
                for key in keys {
                    shape.set(key, value.clone(), true);
                }
                Ok(shape.into_value())
            }
            None => Err(self.unsupported(
                first.span(),
                "cannot key a `Record`: keys must be `string` or string literals",
            )),
        }
    }

    /// `Pick<T, K>` or `Omit<T, K>` (`name`), `T` lowered to `shape` already.
    fn pick_or_omit(
        &mut self,
        m: &Rc<ModuleInfo>,
        env: &Env,
        name: &str,
        mut shape: Shape,
        rest: &[Box<TsType>],
        span: Span,
    ) -> R<Value> {
        let keys = match rest.first() {
            Some(k) => keys_of(&self.lower(m, env, k)?.value()),
            None => None,
        };
        let Some(Keys::Listed(keys)) = keys else {
            return Err(self.unsupported(span, &format!("names keys that are not string literals in `{name}`")));
        };
        let keep = name == "Pick";
        shape.props.retain(|p| keys.contains(&p.name) == keep);
        Ok(shape.into_value())
    }

    fn shape_of(&self, schema: Value, ty: &TsType, utility: &str) -> R<Shape> {
        Shape::from_value(&schema).ok_or_else(|| {
            self.unsupported(
                ty.span(),
                &format!("is not an object type, so `{utility}` cannot apply to it"),
            )
        })
    }

    /// An enum's values, or only `member`'s.
    pub(super) fn enum_schema(&self, e: &TsEnumDecl, member: Option<&str>, span: Span) -> R<Value> {
        let mut next = Some(0.0);
        let mut values = Vec::new();
        for m in &e.members {
            let name = match &m.id {
                TsEnumMemberId::Ident(id) => id.sym.to_string(),
                TsEnumMemberId::Str(s) => s.value.to_string_lossy().into_owned(),
            };
            let value = match m.init.as_deref().map(unwrap_expr) {
                None => next.and_then(number),
                Some(Expr::Lit(Lit::Num(n))) => number(n.value),
                Some(Expr::Unary(u)) if u.op == UnaryOp::Minus => match unwrap_expr(&u.arg) {
                    Expr::Lit(Lit::Num(n)) => number(-n.value),
                    _ => None,
                },
                Some(Expr::Lit(Lit::Str(s))) => Some(Value::from(s.value.to_string_lossy())),
                Some(Expr::Tpl(t)) if t.exprs.is_empty() => Some(Value::from(
                    t.quasis
                        .iter()
                        .filter_map(|q| q.cooked.as_ref())
                        .map(|c| c.to_string_lossy().into_owned())
                        .collect::<String>(),
                )),
                Some(_) => None,
            };
            let Some(value) = value else {
                return Err(self.fail(
                    m.span,
                    format!("the enum member `{}.{name}` has a computed value", e.id.sym),
                ));
            };
            next = value.as_f64().map(|n| n + 1.0);
            if member.is_none_or(|wanted| wanted == name) {
                values.push(value);
            }
        }
        if values.is_empty() {
            return Err(self.unsupported(span, "names no enum member"));
        }
        let mut prims = Prims::default();
        for v in &values {
            prims.add(json_type(v), Some(v.clone()));
        }
        Ok(prims.into_schemas().pop().unwrap_or_default())
    }
}
