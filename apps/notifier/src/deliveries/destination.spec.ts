import { destinationKey } from './destination';

describe('destinationKey (what the per-destination cap counts against)', () => {
  it('ignores the port', () => {
    expect(destinationKey('hooks.example.com:8443')).toBe('example.com');
    expect(destinationKey('127.0.0.1:4001')).toBe(destinationKey('127.0.0.1:4002'));
    expect(destinationKey('https://shop.example.com:444/hook?x=1')).toBe('example.com');
  });

  it('keys a name by its registrable domain, public suffixes (private ones too) respected', () => {
    expect(destinationKey('a.hooks.shop.example.co.uk')).toBe('example.co.uk');
    expect(destinationKey('HOOKS.Example.COM.')).toBe('example.com');
    // Sites on a shared hosting suffix belong to different owners: counted apart.
    expect(destinationKey('one.github.io')).toBe('one.github.io');
    expect(destinationKey('two.github.io:8080')).toBe('two.github.io');
  });

  it('keys IP literals, localhost and single-label names by themselves', () => {
    expect(destinationKey('127.0.0.1:8080')).toBe('127.0.0.1');
    expect(destinationKey('127.0.0.2')).toBe('127.0.0.2');
    expect(destinationKey('[::1]:8080')).toBe('::1');
    expect(destinationKey('[2001:db8::1]')).toBe('2001:db8::1');
    expect(destinationKey('localhost:3000')).toBe('localhost');
    expect(destinationKey('intranet:80')).toBe('intranet');
  });
});
