// TrailblazeNodeSelector: the structural description of a node that recordings hold.
//
// Field names follow Trailblaze's own selector model, so selectors copied from its recorded
// trails type-check unchanged. Every driver and every matchable property of the original's
// grammar is listed; the Rust selector type and this file must list the same keys, because
// the native type gate and `check --tsc` have to agree.
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
  /** The accessibility driver's unique id of the node (exact). */
  uniqueId?: string;
  /** A Jetpack Compose `testTag` exposed to accessibility. */
  composeTestTagRegex?: string;
  /** The text of the node that labels this one. */
  labeledByTextRegex?: string;
  /** The state description (e.g. `On`, `50 percent`). */
  stateDescriptionRegex?: string;
  /** The title of the pane the node is. */
  paneTitleRegex?: string;
  /** The role description read to accessibility users. */
  roleDescriptionRegex?: string;
  /** Whether the node can be checked. */
  isCheckable?: boolean;
  /** Whether the node is selected. */
  isSelected?: boolean;
  /** Whether the node scrolls. */
  isScrollable?: boolean;
  /** Whether the node is a heading. */
  isHeading?: boolean;
  /** Whether an editable node takes several lines. */
  isMultiLine?: boolean;
  /** The editable field's Android `InputType` flags. */
  inputType?: number;
  /** The node's row in a collection (list or grid). */
  collectionItemRowIndex?: number;
  /** The node's column in a collection (grid). */
  collectionItemColumnIndex?: number;
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
  /** Whether the node reacts to a tap. */
  clickable?: boolean;
}

/** Predicates on a node from the web (Playwright) driver. Android devices match none of them. */
export interface WebMatch {
  /** The ARIA role, e.g. `button` (exact). */
  ariaRole?: string;
  /** The accessible name. */
  ariaNameRegex?: string;
  /** A CSS selector the element must match. */
  cssSelector?: string;
  /** The element's `data-testid` attribute (exact). */
  dataTestId?: string;
  /** The accessible description. */
  ariaDescriptorRegex?: string;
  /** The level of a heading (1-6). */
  headingLevel?: number;
  /** 0-based index among the elements the other fields match. */
  nthIndex?: number;
}

/** Predicates on a node from the Compose desktop driver (semantics tree). Android devices match none of them. */
export interface ComposeMatch {
  /** The node's `testTag` (exact). */
  testTag?: string;
  /** The semantics role, e.g. `Button` (exact). */
  role?: string;
  /** The node's text. */
  textRegex?: string;
  /** The text of an editable field. */
  editableTextRegex?: string;
  /** The content description. */
  contentDescriptionRegex?: string;
  /** `On`, `Off` or `Indeterminate` (exact). */
  toggleableState?: string;
  /** Whether the node is enabled. */
  isEnabled?: boolean;
  /** Whether the node has focus. */
  isFocused?: boolean;
  /** Whether the node is selected. */
  isSelected?: boolean;
  /** Whether the node is a password field. */
  isPassword?: boolean;
}

/** Predicates on a node from the Maestro-based iOS driver. Android devices match none of them. */
export interface IosMaestroMatch {
  /** The node's visible text. */
  textRegex?: string;
  /** The accessibility identifier. */
  resourceIdRegex?: string;
  /** The accessibility label. */
  accessibilityTextRegex?: string;
  /** The element type. */
  classNameRegex?: string;
  /** The placeholder of a text field. */
  hintTextRegex?: string;
  /** Whether the node has focus. */
  focused?: boolean;
  /** Whether the node is selected. */
  selected?: boolean;
}

/** Predicates on a node from the AXe iOS accessibility driver. Android devices match none of them. */
export interface IosAxeMatch {
  /** The accessibility role. */
  roleRegex?: string;
  /** The accessibility subrole. */
  subroleRegex?: string;
  /** The accessibility label. */
  labelRegex?: string;
  /** The accessibility value. */
  valueRegex?: string;
  /** The accessibility identifier (exact). */
  uniqueId?: string;
  /** The element type. */
  typeRegex?: string;
  /** The title. */
  titleRegex?: string;
  /** A custom accessibility action the node offers (exact). */
  customAction?: string;
  /** Whether the node is enabled. */
  enabled?: boolean;
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
  /** Match on Compose semantics properties. */
  compose?: ComposeMatch;
  /** Match on Maestro-based iOS properties. */
  iosMaestro?: IosMaestroMatch;
  /** Match on iOS accessibility (AXe) properties. */
  iosAxe?: IosAxeMatch;
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
