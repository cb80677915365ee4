// TrailblazeNodeSelector: the structural description of a node that recordings hold.
//
// Field names follow Trailblaze's own selector model, so selectors copied from its recorded
// trails type-check unchanged. Only a small, commonly recorded subset of each driver's
// matchable properties is listed; the Rust selector type and this file must list the same
// keys, because the native type gate and `check --tsc` have to agree.
//
// String fields ending in `Regex` are matched as a regular expression against the whole
// property value, falling back to exact equality, so literals such as `$5.00` need no escaping.
// Every field is optional: only the fields that are set act as predicates.

/** Predicates on a node from the Android accessibility driver. */
export interface AndroidAccessibilityMatch {
  /** The node's visible text. */
  textRegex?: string;
  /** The hint (placeholder) of an editable field. */
  hintTextRegex?: string;
  /** The Android resource id, e.g. `com.example.demo:id/email`. */
  resourceIdRegex?: string;
  /** The content description (accessibility label). */
  contentDescriptionRegex?: string;
  /** The view class, e.g. `android.widget.EditText`. */
  classNameRegex?: string;
  /** Whether the node is enabled. */
  isEnabled?: boolean;
  /** Whether a checkable node is checked. */
  isChecked?: boolean;
  /** Whether the node is a password field. */
  isPassword?: boolean;
  /** Whether the node has input focus. */
  isFocused?: boolean;
  /** Whether the node reacts to a tap. */
  isClickable?: boolean;
  /** Whether the node accepts text input. */
  isEditable?: boolean;
}

/** Predicates on a node from the Maestro-based Android driver (UI Automator hierarchy). */
export interface AndroidMaestroMatch {
  /** The node's visible text. */
  textRegex?: string;
  /** The Android resource id. */
  resourceIdRegex?: string;
  /** The accessibility text (content description). */
  accessibilityTextRegex?: string;
  /** The view class. */
  classNameRegex?: string;
  /** The hint of an editable field. */
  hintTextRegex?: string;
  /** Whether the node is enabled. */
  enabled?: boolean;
  /** Whether the node is checked. */
  checked?: boolean;
  /** Whether the node has input focus. */
  focused?: boolean;
  /** Whether the node is selected. */
  selected?: boolean;
}

/** Predicates on a node from the web (Playwright) driver. */
export interface WebMatch {
  /** The ARIA role, e.g. `button` (exact). */
  ariaRole?: string;
  /** The accessible name. */
  ariaNameRegex?: string;
  /** A CSS selector the element must match. */
  cssSelector?: string;
  /** The element's `data-testid` attribute (exact). */
  dataTestId?: string;
}

/**
 * Trailblaze's recursive node selector: at most one driver match plus relational constraints.
 * A node matches when every field that is set holds.
 */
export interface TrailblazeNodeSelector {
  /** Match on Android accessibility properties. */
  androidAccessibility?: AndroidAccessibilityMatch;
  /** Match on Maestro-based Android properties. */
  androidMaestro?: AndroidMaestroMatch;
  /** Match on web (DOM / ARIA) properties. */
  web?: WebMatch;
  /** The node lies below a node matching this selector. */
  below?: TrailblazeNodeSelector;
  /** The node lies above a node matching this selector. */
  above?: TrailblazeNodeSelector;
  /** The node lies left of a node matching this selector. */
  leftOf?: TrailblazeNodeSelector;
  /** The node lies right of a node matching this selector. */
  rightOf?: TrailblazeNodeSelector;
  /** The node is a descendant of a node matching this selector. */
  childOf?: TrailblazeNodeSelector;
  /** The node has a direct child matching this selector. */
  containsChild?: TrailblazeNodeSelector;
  /** The node has descendants matching every one of these selectors. */
  containsDescendants?: TrailblazeNodeSelector[];
  /** 0-based index among all matches, top-to-bottom then left-to-right; the last resort. */
  index?: number;
}
