// The topics and list filter of a webhook: the fields registration and editing share.
import { TOPICS, type Topic } from '../../topics';
import type { Subscription } from './api';
import { ErrorText, errorOf } from './feedback';
import { TextField } from './text-field';

/** The list filter as typed: ids separated by commas, spaces or new lines. */
export const parseListIds = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

export function SubscriptionFields({
  idPrefix,
  value,
  onChange,
  error,
}: {
  idPrefix: string;
  value: { events: Topic[]; listIds: string };
  onChange: (value: { events: Topic[]; listIds: string }) => void;
  error: unknown;
}) {
  const eventsError = errorOf(error, 'events');
  const toggle = (topic: Topic, checked: boolean) =>
    onChange({
      ...value,
      events: checked ? TOPICS.filter((t) => t === topic || value.events.includes(t)) : value.events.filter((t) => t !== topic),
    });
  return (
    <>
      <fieldset aria-describedby={eventsError ? `${idPrefix}-events-error` : undefined}>
        <legend>Topics</legend>
        {TOPICS.map((topic) => (
          <label class="check" key={topic}>
            <input
              type="checkbox"
              name="events"
              value={topic}
              checked={value.events.includes(topic)}
              onChange={(event) => toggle(topic, event.currentTarget.checked)}
            />
            {topic}
          </label>
        ))}
        <ErrorText error={eventsError} id={`${idPrefix}-events-error`} />
      </fieldset>
      <TextField
        id={`${idPrefix}-list-ids`}
        label="List filter"
        hint="List ids separated by commas; empty means all of the account's lists."
        name="listIds"
        value={value.listIds}
        onValue={(listIds) => onChange({ ...value, listIds })}
        error={errorOf(error, 'listIds')}
      />
    </>
  );
}

/** The form's value as the API takes it. */
export const toSubscription = (value: { events: Topic[]; listIds: string }): Subscription => ({
  events: value.events,
  listIds: parseListIds(value.listIds),
});
