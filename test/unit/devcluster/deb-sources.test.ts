import { describe, expect, it } from 'vitest';
import { debSrcLines, parseDeb822Sources, parseOneLineSources, parsePrintUris } from '../../../src/devcluster/deb-sources.js';

const DEB822 = `Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: https://deb.nodesource.com/node_20.x
Suites: nodistro
Components: main
`;

describe('deb-src derivation', () => {
  it('derives one deb-src line per bookworm suite of a deb822 file, keeping signed-by', () => {
    expect(debSrcLines(parseDeb822Sources(DEB822))).toEqual([
      'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main',
      'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main',
      'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main',
    ]);
  });

  it('reads one-line sources.list entries, ignoring comments, deb-src and other releases', () => {
    const repos = parseOneLineSources(
      '# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian bookworm main contrib\ndeb-src http://x bookworm main\ndeb http://mirror.example/debian bullseye main\ndeb https://packages.example/apt cloud-sdk-bookworm main\n',
    );
    expect(debSrcLines(repos)).toEqual(['deb-src [signed-by=/k.gpg] http://mirror.example/debian bookworm main']);
  });

  it('skips disabled deb822 entries and inline keys it cannot carry', () => {
    const text = 'Types: deb\nURIs: http://a/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n\nTypes: deb deb-src\nURIs: http://b/debian\nSuites: bookworm\nComponents: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n xyz\n';
    expect(debSrcLines(parseDeb822Sources(text))).toEqual(['deb-src http://b/debian bookworm main']);
  });

  it('finds nothing when no bookworm main repository exists', () => {
    expect(debSrcLines(parseOneLineSources('deb http://x/debian trixie main\n'))).toEqual([]);
  });
});

describe('parsePrintUris', () => {
  it('reads URL, file name, size and SHA-256', () => {
    const uris = parsePrintUris(
      "Need to get 34.5 MB of source archives.\n'http://deb.debian.org/debian/pool/main/k/kubernetes/kubernetes_1.20.5%2breally1.20.2-1.1%2bdeb12u1.dsc' kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc 1973 SHA256:19fa1da5aefcef673894ac9511986bd98a14410cf8eea0b626613c30df435257\n",
    );
    expect(uris).toEqual([
      {
        url: 'http://deb.debian.org/debian/pool/main/k/kubernetes/kubernetes_1.20.5%2breally1.20.2-1.1%2bdeb12u1.dsc',
        fileName: 'kubernetes_1.20.5+really1.20.2-1.1+deb12u1.dsc',
        size: 1973,
        sha256: '19fa1da5aefcef673894ac9511986bd98a14410cf8eea0b626613c30df435257',
      },
    ]);
  });
});
