-- What a test reactor handler writes (the plumbing tables come from rummy_platform's migrations).
CREATE TABLE effects (
    event_id  text NOT NULL,
    note      text NOT NULL
);
