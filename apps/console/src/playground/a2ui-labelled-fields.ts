import type { LitComponentApi } from '@a2ui/lit/v0_9';
import {
  A2uiBasicTextFieldElement,
  A2uiDateTimeInput,
  A2uiDateTimeInputElement,
  A2uiTextField,
} from '@a2ui/web_core/v0_9/basic_catalog';
import type { PropertyValues } from 'lit';

/**
 * The basic catalog's TextField and DateTimeInput (0.11.0) render their label beside the field without
 * associating it, so a screen reader announces an unnamed field (axe `label`, WCAG 1.3.1 / 4.1.2). These
 * subclasses of the official elements render exactly the same and then name each field by its label.
 */
function nameFields(element: HTMLElement): void {
  const label = element.querySelector('label')?.textContent?.trim();
  if (!label) {
    return;
  }
  const fields = [...element.querySelectorAll<HTMLInputElement>('input, textarea, select')];
  for (const field of fields) {
    if (field.closest('label') === null) {
      field.setAttribute('aria-label', fields.length > 1 ? `${label} (${field.type})` : label);
    }
  }
}

class LabelledTextField extends A2uiBasicTextFieldElement {
  protected override updated(changed: PropertyValues): void {
    super.updated(changed);
    nameFields(this);
  }
}

class LabelledDateTimeInput extends A2uiDateTimeInputElement {
  protected override updated(changed: PropertyValues): void {
    super.updated(changed);
    nameFields(this);
  }
}

customElements.define('a2a-a2ui-textfield', LabelledTextField);
customElements.define('a2a-a2ui-datetimeinput', LabelledDateTimeInput);

/** The catalog entries that replace the basic catalog's, by component name. */
export const LABELLED_FIELDS: ReadonlyMap<string, LitComponentApi> = new Map([
  [A2uiTextField.name, { ...A2uiTextField, tagName: 'a2a-a2ui-textfield' }],
  [A2uiDateTimeInput.name, { ...A2uiDateTimeInput, tagName: 'a2a-a2ui-datetimeinput' }],
]);
