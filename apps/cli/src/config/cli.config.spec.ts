import { loadCliConfig } from './cli.config';

/** Where the portal links merchant:portal-link prints start: the console app's address. */
describe('the CLI portal link base', () => {
  const load = (env: Record<string, string>) => loadCliConfig({ NODE_ENV: 'test', ...env });

  it('is CONSOLE_PUBLIC_URL, without a trailing slash', () => {
    expect(load({ CONSOLE_PUBLIC_URL: 'https://console.pay.example.com/' }).publicBaseUrl).toBe('https://console.pay.example.com');
  });

  it('falls back to PUBLIC_BASE_URL, its former name, only when CONSOLE_PUBLIC_URL is not set', () => {
    expect(load({ PUBLIC_BASE_URL: 'https://pay.example.com' }).publicBaseUrl).toBe('https://pay.example.com');
    expect(load({ CONSOLE_PUBLIC_URL: 'https://console.example.com', PUBLIC_BASE_URL: 'https://pay.example.com' }).publicBaseUrl).toBe(
      'https://console.example.com',
    );
  });

  it("outside production defaults to the console app's local port", () => {
    expect(load({}).publicBaseUrl).toBe('http://127.0.0.1:3100');
    expect(load({ CONSOLE_PORT: '3200' }).publicBaseUrl).toBe('http://127.0.0.1:3200');
  });

  it('names the variable it read when the URL is not http(s)', () => {
    expect(() => load({ PUBLIC_BASE_URL: 'ftp://pay.example.com' })).toThrow(/PUBLIC_BASE_URL must be an http\(s\) URL/);
    expect(() => load({ CONSOLE_PUBLIC_URL: 'ftp://pay.example.com' })).toThrow(/CONSOLE_PUBLIC_URL must be an http\(s\) URL/);
  });
});
