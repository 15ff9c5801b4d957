// skills_sdk.mjs: the official TypeScript SDK client's skills support
// (SkillsClient from @modelcontextprotocol/client/ext/skills) against
// Phantom: list, get, read with digest/size/frontmatter verification of
// every file of every skill, and readDirectory. Prints "ok - ERA: what" or
// "not ok - ERA: what: why" per check.
//   node skills-sdk.mjs --url URL --era modern|legacy
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { get, check, done, transport, connect } from './common.mjs';

const era = get('era', 'modern');
const ok = (cond, desc, detail) => check(cond, `${era}: ${desc}`, detail === undefined ? '' : String(detail));
const attempt = async (desc, fn) => {
    try {
        return await fn();
    } catch (e) {
        ok(false, desc, `${e?.name}: ${e?.message}`);
        return undefined;
    }
};

const client = new Client(
    { name: 'phantom-skills-sdk-test', version: '1.0.0' },
    era === 'modern' ? { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } } : { capabilities: {} }
);
await connect(client, await transport(), `${era}: connects`, { report: false });
ok(client.getNegotiatedProtocolVersion() === (era === 'modern' ? '2026-07-28' : '2025-11-25'),
    `negotiated ${client.getNegotiatedProtocolVersion()}`);
const skills = new SkillsClient(client);
ok(skills.supported, 'the server declares the skills extension');
ok(skills.directoryRead, 'and directoryRead');

const listing = await attempt('skills.list()', () => skills.list());
const uris = listing ? listing.skills.map(s => s.uri) : [];
ok(listing && listing.invalid.length === 0, 'list() refuses no entry', JSON.stringify(listing?.invalid));
ok(JSON.stringify(uris) === JSON.stringify([
    'skill://acme/billing/refunds/SKILL.md',
    'skill://acme/billing/refunds/partial-refunds/SKILL.md',
    'skill://git-workflow/SKILL.md',
    'skill://studies/42/study-review/SKILL.md'
]), 'list() returns the bundled skills', uris.join(' '));
if (era === 'modern') {
    ok(Number.isInteger(listing?.ttlMs) && ['public', 'private'].includes(listing?.cacheScope),
        `list() has ttlMs ${listing?.ttlMs} and cacheScope ${listing?.cacheScope}`);
}

let files = 0;
for (const entry of listing ? listing.skills : []) {
    const got = await attempt(`get(${entry.uri})`, () => skills.get(entry.uri));
    ok(got && got.skill.uri === entry.uri && JSON.stringify(got.skill.resources) === JSON.stringify(entry.resources),
        `get(${entry.uri}) returns the listed entry`);
    for (const res of entry.resources) {
        const f = await attempt(`read(${res.uri})`, () => skills.read(entry, res.uri));
        ok(f && f.verified && f.bytes.length === res.size, `read(${res.uri}) verified (size and digest)`);
        files++;
    }
    const md = await attempt(`read(${entry.uri}) SKILL.md`, () => skills.read(entry));
    ok(md && md.frontmatter && md.frontmatter.name === entry.frontmatter.name,
        `SKILL.md of ${entry.uri}: frontmatter equals the entry's`);
    const root = entry.uri.slice(0, -'/SKILL.md'.length);
    const dir = await attempt(`readDirectory(${root})`, () => skills.readDirectory(root));
    ok(dir && dir.resources.some(r => r.uri === entry.uri && r.name === entry.frontmatter.name),
        `readDirectory(${root}) lists SKILL.md with the skill's name`);
}
ok(files === 9, `${files} files read and verified`);

// a relative reference with a space, resolved and verified by the client
const git = listing?.skills.find(s => s.uri === 'skill://git-workflow/SKILL.md');
if (git) {
    const f = await attempt('read(git-workflow, "branch naming.md")', () => skills.read(git, 'branch naming.md'));
    ok(f && f.verified && f.uri === 'skill://git-workflow/branch%20naming.md',
        'a relative reference with a space resolves to the percent-encoded file and verifies', f?.uri);
    const sub = await attempt('readDirectory(git-workflow/references)',
        () => skills.readDirectory('skill://git-workflow/references'));
    ok(sub && sub.resources.length === 1 && sub.resources[0].name === 'commit-messages.md',
        'readDirectory of a subdirectory');
    const top = await attempt('readDirectory(git-workflow)', () => skills.readDirectory('skill://git-workflow'));
    ok(top && top.resources.some(r => r.name === 'references' && r.mimeType === 'inode/directory'),
        'subdirectories are inode/directory');
}
const refunds = listing?.skills.find(s => s.uri === 'skill://acme/billing/refunds/SKILL.md');
if (refunds) {
    const f = await attempt('read(refunds)', () => skills.read(refunds));
    ok(f && /Hello \./.test(f.body ?? ''), 'the refunds template is rendered (no principal: "Hello .")', f?.body);
    ok(refunds.resources.some(r => r.uri === 'skill://acme/billing/refunds/partial-refunds/SKILL.md'),
        'the parent lists its nested skill\'s files');
}
try {
    await skills.get('skill://acme/billing/chargebacks/SKILL.md');
    ok(false, 'get() of an unknown skill fails');
} catch (e) {
    ok(e?.code === -32602 && /No skill is served at skill:\/\/acme\/billing\/chargebacks\/SKILL.md/.test(e?.message),
        'get() of an unknown skill: -32602 No skill is served at ...', `${e?.code} ${e?.message}`);
}
const again = await attempt('list() after an error', () => skills.list());
ok(again && again.skills.length === uris.length, 'the server still answers after an error');
await client.close();
done();
