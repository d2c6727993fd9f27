// The test process itself is not "in CI": Ink renders no intermediate frames when it believes it
// is (is-in-ci reads CI at import), which ink-testing-library needs. Commands under test get their
// own environment through ctx.env, and end-to-end tests pass CI explicitly to the real binary.
process.env.CI = 'false';
