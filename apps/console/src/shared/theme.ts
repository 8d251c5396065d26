import { css } from 'lit';

/** Styles shared by the console's components: forms, buttons, tables, panels, status text. */
export const theme = css`
  :host {
    display: block;
  }
  *:focus-visible {
    outline: 3px solid var(--focus);
    outline-offset: 2px;
  }
  h1,
  h2,
  h3 {
    line-height: 1.2;
    margin: 0 0 0.6rem;
  }
  h1 {
    font-size: 1.4rem;
  }
  h2 {
    font-size: 1.15rem;
  }
  h3 {
    font-size: 1rem;
  }
  label {
    display: block;
    font-weight: 600;
    margin: 0.5rem 0 0.2rem;
  }
  input,
  select,
  textarea {
    font: inherit;
    color: inherit;
    padding: 0.35rem 0.5rem;
    border: 1px solid var(--muted);
    border-radius: 4px;
    background: #fff;
    max-width: 100%;
    box-sizing: border-box;
  }
  button {
    font: inherit;
    padding: 0.35rem 0.9rem;
    border-radius: 4px;
    border: 1px solid var(--accent);
    background: var(--accent);
    color: var(--accent-ink);
    cursor: pointer;
  }
  button.secondary {
    background: #fff;
    color: var(--accent);
  }
  button.danger {
    background: var(--danger);
    border-color: var(--danger);
  }
  button:disabled {
    opacity: 0.6;
    cursor: not-allowed;
  }
  table {
    border-collapse: collapse;
    width: 100%;
  }
  th,
  td {
    text-align: left;
    padding: 0.3rem 0.5rem;
    border-bottom: 1px solid var(--line);
    vertical-align: top;
  }
  th {
    background: var(--panel);
    font-weight: 600;
  }
  code,
  pre {
    font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace;
    font-size: 0.9em;
  }
  pre {
    background: var(--panel);
    border: 1px solid var(--line);
    padding: 0.5rem;
    overflow: auto;
    max-height: 24rem;
    white-space: pre-wrap;
    word-break: break-word;
  }
  .panel {
    background: var(--panel);
    border: 1px solid var(--line);
    border-radius: 6px;
    padding: 0.8rem 1rem;
    margin: 0 0 1rem;
  }
  .error {
    color: var(--danger);
    font-weight: 600;
  }
  .ok {
    color: var(--ok);
  }
  .muted {
    color: var(--muted);
  }
  .row {
    display: flex;
    gap: 0.5rem;
    align-items: end;
    flex-wrap: wrap;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
